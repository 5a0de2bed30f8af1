import { Elysia } from "elysia";
import { currentRequest } from "../platform/log";
import { httpDuration, labelled } from "../platform/process-metrics";
import { statusOf } from "./request-log";

const durations = labelled(httpDuration);

/**
 * Every answered request's duration (the histogram's _count is the request count) by route
 * pattern (`/v1/svg/:slug`; requests
 * that match no route are `unmatched`, so the label set stays bounded), method and status.
 */
export const httpMetrics = new Elysia({ name: "http-metrics" }).onAfterResponse(
  { as: "global" },
  ({ request, set, route, response }) => {
    const status = String(statusOf(response, set.status));
    const labels = { route: route || "unmatched", method: request.method, status };
    const key = `${labels.method} ${labels.route} ${status}`;
    const scope = currentRequest();
    const seconds = scope ? (performance.now() - scope.started) / 1000 : 0;
    durations(key, labels).observe(seconds);
  },
);
