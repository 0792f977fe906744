/** The operator dashboard's per-minute figures, read from the database (decision 2002). */
export { dashboardQueries, dashboardSeries, MINUTE_MS, type DashboardSeries } from './series.js';
