// Request counts and latencies by operation. `route` is the route label: the pattern a
// request matched, never the raw URL (ids in paths would make one series per resource and
// grow without bound); the HTTP host supplies it (server/http/route-label.ts).
import { httpRequestDuration, httpRequests } from './registry.ts';

export function observeRequest(method: string, route: string, status: number, ms: number): void {
  const labels = { method, route, status: String(status) };
  httpRequests.inc(labels);
  httpRequestDuration.observe(labels, ms / 1000);
}
