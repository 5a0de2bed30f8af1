/**
 * The route guards the controllers use: who is calling (API key, bearer token, operator token),
 * how often they may (quota and rate-limit macros) and what their metered calls record.
 */

export { noteMeter, settleHook } from "../usage/meter";
export { type AuthDeps, authPlugin, charge, rateLimitHeaders } from "./auth-macros";
export { authenticate, type BearerPolicy, bearerOf, hasBearerToken } from "./credentials";
export { Operators, operatorsOf, requireOperator } from "./operator";
export { type RateLimitDeps, rateLimitPlugin } from "./rate-limit-macros";
