import { t } from "elysia";
import type { RatePolicy } from "../quota/limits";

export const VisitorCountResponse = t.Object({
  count: t.Integer({
    minimum: 0,
    description: "Visitors counted so far (each at most once per UTC day)",
  }),
});

/** 60 requests per minute per client IP, GET and POST together. */
export const VISITOR_COUNTER_LIMIT: RatePolicy = {
  name: "visitor-counter",
  limit: 60,
  windowSeconds: 60,
  label: "the visitor counter",
};
