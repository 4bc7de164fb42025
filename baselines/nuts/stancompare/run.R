# Stan side of compare.sh: fits model.stan to the task JSON files in the
# working directory and prints one line per (likelihood, seed).
suppressMessages({library(rstan); library(jsonlite)})
rstan_options(auto_write = TRUE)
m <- stan_model("model.stan")
liks <- c("lin_gaussian", "bernoulli_logit", "binomial_logit", "lin_student_t")
for (li in seq_along(liks)) {
  for (seed in 1:3) {
    tk <- fromJSON(sprintf("task_%s_%d.json", liks[li], seed), simplifyVector = TRUE)
    f <- tk$factors
    N <- nrow(f); d <- tk$d
    num <- function(v, def) if (is.null(v)) rep(def, N) else as.numeric(v)
    dat <- list(d = d, N = N, lik = li - 1, X = do.call(rbind, f$x), y = as.numeric(f$y),
                yi = as.integer(round(f$y)), trials = as.integer(num(f$trials, 1)),
                sigma = num(f$sigma, 1), df = num(f$df, 1), loc = tk$prior$loc, scale = tk$prior$scale)
    init <- lapply(1:4, function(i) list(z = tk$prior$loc))
    t0 <- proc.time()
    fit <- sampling(m, data = dat, chains = 4, cores = 1, iter = 2000, warmup = 1000, seed = seed,
                    init = init, refresh = 0)
    el <- proc.time() - t0
    cpu <- el[["user.self"]] + el[["sys.self"]]
    samp <- sum(get_elapsed_time(fit))
    grads <- sum(sapply(get_sampler_params(fit, inc_warmup = TRUE), function(s) sum(s[, "n_leapfrog__"])))
    spw <- get_sampler_params(fit, inc_warmup = FALSE)
    a <- as.array(fit, pars = "z")
    ess <- min(sapply(1:d, function(j) ess_bulk(a[, , j])))
    div <- sum(sapply(spw, function(s) sum(s[, "divergent__"])))
    cat(sprintf("STAN %s seed %d: cpu %.3f s, grads %d, min bulk ESS %.0f, grads/cpu-s %.0f, ess/cpu-s %.0f, ess/grad %.4f, ess/sampler-s %.0f, div %d\n",
                liks[li], seed, cpu, grads, ess, grads / cpu, ess / cpu, ess / grads, ess / samp, div))
  }
}
