export { RateLimits, type LimitGroup, type LimitState } from './limiter.js';
export { addressSubject } from './subject.js';
