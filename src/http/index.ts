/** The HTTP face of pitchain (a leaf adapter over the query core). */
export {};
