// Typed-factor posterior of an afin task JSON (DESIGN.md "Task JSON"),
// written for rstan 2.21 (old array syntax). Factors are grouped by family
// so that each family is one vectorised statement; a heterogeneous task
// simply fills several groups. Normalising constants are dropped (~ statements), as
// afin's NUTS also samples the unnormalised density.
data {
  int<lower=1> d;
  // prior: 1 diag_gaussian, 2 diag_laplace, 3 diag_student_t, 4 fullrank_gaussian
  int<lower=1, upper=4> prior_type;
  vector[d] loc;
  vector<lower=0>[d] scale;          // unused by fullrank_gaussian
  real<lower=0> prior_df;            // diag_student_t only
  matrix[prior_type == 4 ? d : 0, prior_type == 4 ? d : 0] precision;

  int<lower=0> n_lg;                 // lin_gaussian
  matrix[n_lg, d] x_lg;
  vector[n_lg] y_lg;
  vector<lower=0>[n_lg] sigma_lg;

  int<lower=0> n_bl;                 // bernoulli_logit
  matrix[n_bl, d] x_bl;
  int<lower=0, upper=1> y_bl[n_bl];

  int<lower=0> n_bn;                 // binomial_logit
  matrix[n_bn, d] x_bn;
  int<lower=0> y_bn[n_bn];
  int<lower=0> trials_bn[n_bn];

  int<lower=0> n_st;                 // lin_student_t
  matrix[n_st, d] x_st;
  vector[n_st] y_st;
  vector<lower=0>[n_st] sigma_st;
  vector<lower=0>[n_st] df_st;

  int<lower=0> n_g;                  // gaussian (y is a d-vector)
  vector[d] y_g[n_g];
  vector<lower=0>[n_g] sigma_g;
}
parameters {
  vector[d] z;
}
model {
  if (prior_type == 1) z ~ normal(loc, scale);
  else if (prior_type == 2) z ~ double_exponential(loc, scale);
  else if (prior_type == 3) z ~ student_t(prior_df, loc, scale);
  else z ~ multi_normal_prec(loc, precision);

  // Not the *_glm functions: in Debian's rstan 2.21 build normal_id_glm
  // returns a wrong log-density value (its gradient is right), which wrecks
  // the Hamiltonian; the plain vectorised forms match afin's density and
  // gradient (see README.md, "Checking the Stan program").
  if (n_lg > 0) y_lg ~ normal(x_lg * z, sigma_lg);
  if (n_bl > 0) y_bl ~ bernoulli_logit(x_bl * z);
  if (n_bn > 0) y_bn ~ binomial_logit(trials_bn, x_bn * z);
  if (n_st > 0) y_st ~ student_t(df_st, x_st * z, sigma_st);
  for (i in 1:n_g) y_g[i] ~ normal(z, sigma_g[i]);
}
