/* Statistics over runs and step sizes (studies/fit.c, studies/ensemble.c): drift slopes, the
 * statistics of ensemble columns, observed orders. */
#ifndef NH_STUDIES_STATISTICS_H
#define NH_STUDIES_STATISTICS_H


/* Least-squares slope of y against t over n points (the energy drift slope); NaN if n < 2. */
double nh_drift_slope(int n, const double *t, const double *y);
/* Per column c of x (rows × cols, row-major): the mean, the unbiased variance and the number of
 * finite entries, NaN and infinite entries (stopped runs) left out; mean NaN when no entry is
 * finite, variance NaN when fewer than two are (spec/newmark.md §6 A11). */
void nh_column_stats(int rows, int cols, const double *x, double *mean, double *var, int *count);

/* Per column c of x (rows × cols, row-major): the p-quantile (0 ≤ p ≤ 1) of its finite entries,
 * linearly interpolated between order statistics (gsl_stats_quantile_from_sorted_data: the
 * entry at rank p(k − 1) of the k sorted ones); NaN when no entry is finite. Returns 0, or -1 out
 * of memory. */
int nh_column_quantile(int rows, int cols, const double *x, double p, double *out);

/* Order fit over h (ascending or not) and errors: the finest `fit_points` points whose error is
 * finite and above `floor`. Returns 0, -1 if fewer than 2 such points, or -2 if out of memory
 * (order and stderr NaN, first -1, count 0 in both failures). */
int nh_fit_order(int nh, const double *h, const double *err, int fit_points, double floor,
                 double *order, double *stderr_, int *first, int *count);
/* nh_fit_order with a floor per step size: err[i] must lie above floors[i]. */
int nh_fit_order_floors(int nh, const double *h, const double *err, int fit_points, const double *floors,
                        double *order, double *stderr_, int *first, int *count);

#endif
