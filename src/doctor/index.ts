/** `gengate doctor`: one line per check with its fix (decision 2604). */
export { runDoctor, type DoctorOptions } from './doctor.js';
export { SKEW_WARN_MS, type Check } from './checks.js';
