data {
  int<lower=1> d;
  int<lower=0> N;
  int<lower=0, upper=3> lik; // 0 lin_gaussian, 1 bernoulli_logit, 2 binomial_logit, 3 lin_student_t
  matrix[N, d] X;
  vector[N] y;
  int yi[N];
  int trials[N];
  vector[N] sigma;
  vector[N] df;
  vector[d] loc;
  vector[d] scale;
}
parameters {
  vector[d] z;
}
model {
  vector[N] eta = X * z;
  z ~ normal(loc, scale);
  if (lik == 0) y ~ normal(eta, sigma);
  else if (lik == 1) yi ~ bernoulli_logit(eta);
  else if (lik == 2) yi ~ binomial_logit(trials, eta);
  else y ~ student_t(df, eta, sigma);
}
