export { RateLimits, type LimitGroup, type LimitState } from './limiter.js';
