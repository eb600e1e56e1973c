/** Path matching for the endpoints: `:name` segments and a final `*name` rest (lookup text holds `/`). */
import type { Endpoint } from '../query/types.js';

export type Match = { endpoint: Endpoint; params: Record<string, string> };

type Compiled = { endpoint: Endpoint; segments: string[]; rest: string | undefined };

/** Matches request paths against endpoint patterns, most specific first. */
export class Router {
  private readonly routes: Compiled[];

  constructor(endpoints: readonly Endpoint[]) {
    this.routes = endpoints
      .map((endpoint) => {
        const segments = endpoint.pattern.split('/').filter((s) => s !== '');
        const last = segments.at(-1);
        const rest = last?.startsWith('*') ? last.slice(1) : undefined;
        return { endpoint, segments: rest === undefined ? segments : segments.slice(0, -1), rest };
      })
      .sort((a, b) => staticCount(b) - staticCount(a) || b.segments.length - a.segments.length);
  }

  /**
   * Finds the endpoint for a raw (still percent-encoded) path. Segments are decoded; a rest parameter is
   * passed raw without its trailing `/`, because its parser decodes it. Throws URIError on a bad escape.
   */
  match(rawPath: string): Match | undefined {
    const parts = rawPath.split('/').filter((s) => s !== '');
    for (const route of this.routes) {
      const params = matchRoute(route, parts, rawPath);
      if (params !== undefined) return { endpoint: route.endpoint, params };
    }
    return undefined;
  }
}

function staticCount(route: Compiled): number {
  return route.segments.filter((s) => !s.startsWith(':')).length;
}

function matchRoute(
  route: Compiled,
  parts: readonly string[],
  rawPath: string,
): Record<string, string> | undefined {
  if (
    route.rest === undefined ? parts.length !== route.segments.length : parts.length <= route.segments.length
  ) {
    return undefined;
  }
  const params: Record<string, string> = {};
  for (let i = 0; i < route.segments.length; i++) {
    const pattern = route.segments[i]!;
    const part = parts[i]!;
    if (pattern.startsWith(':')) params[pattern.slice(1)] = decodeURIComponent(part);
    else if (pattern.toLowerCase() !== part.toLowerCase()) return undefined;
  }
  if (route.rest !== undefined) {
    const prefix = `/${parts.slice(0, route.segments.length).join('/')}/`;
    const start = rawPath.indexOf(prefix) + prefix.length;
    params[route.rest] = rawPath.slice(start).replace(/\/+$/, '');
  }
  return params;
}
