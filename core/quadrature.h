/* Fixed quadrature rules shared by the methods: tables, so that a step allocates nothing (GSL's
 * gsl_integration_glfixed_table_alloc would, per call; tests/core/test_core.c checks these tables
 * against it). */
#ifndef NH_QUADRATURE_H
#define NH_QUADRATURE_H

/* 5-point Gauss–Legendre on [0, 1]: ∫₀¹ f ≈ Σ_p nh_gl5_weight[p] f(nh_gl5_node[p]), exact for
 * polynomials of degree ≤ 9. Nodes (1 ± x)/2 and weights w/2 of the rule on [−1, 1], with
 * x = 0, (1/3)√(5 ∓ 2√(10/7)) and w = 128/225, (322 ± 13√70)/900 (Abramowitz & Stegun 25.4.29,
 * Table 25.4). */
#define NH_GL5_POINTS 5
extern const double nh_gl5_node[NH_GL5_POINTS];
extern const double nh_gl5_weight[NH_GL5_POINTS];

#endif
