/** A client for any service that speaks this API (used by `pitchain mirror`). */
export {};
