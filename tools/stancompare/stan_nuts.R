#!/usr/bin/env Rscript
# Runs Stan's NUTS (rstan) on afin task JSON files with the settings of
# `afin infer --method nuts` and prints one JSON line per (task, rep) on
# stdout: gradient evaluations, CPU seconds, minimum bulk ESS, ESS/s and
# ESS per gradient. Chains run one after another in this single R process
# (cores = 1) so that Stan's seconds are single-core CPU seconds, like
# afin's under GOMAXPROCS=1.
#
# usage: stan_nuts.R [--warmup W] [--draws S] [--chains C] [--seed S]
#                    [--reps R] [--cache DIR] TASK.json...
#        stan_nuts.R --ess-csv DRAWS.csv --chains C
#            (bulk ESS and R-hat of a draw CSV written by
#             `afin infer --draws-out`, chains stacked one after another;
#             used to cross-check afin's own ESS estimator)
#        stan_nuts.R --exec [--warmup W] [--chains C] [--cache DIR]
#            (Stan as an afin external method, `--method exec:stan` with
#             methods.json beside this script: reads $AFIN_TASK, draws
#             $AFIN_BUDGET draws in total over the chains with seed
#             $AFIN_SEED, writes $AFIN_DRAWS_OUT and, in
#             $AFIN_DIAGNOSTICS_OUT, Stan's own seconds and the same
#             diagnostics afin's NUTS reports)

suppressPackageStartupMessages({
  library(jsonlite)
  library(posterior)
})

parse_args <- function(args) {
  o <- list(warmup = 1000L, draws = 1000L, chains = 4L, seed = 1L, reps = 1L,
            cache = file.path(Sys.getenv("HOME"), ".cache", "afin-stancompare"),
            ess_csv = NULL, exec = FALSE, tasks = character())
  i <- 1
  while (i <= length(args)) {
    a <- args[[i]]
    if (a %in% c("--warmup", "--draws", "--chains", "--seed", "--reps", "--cache", "--ess-csv")) {
      if (i == length(args)) stop(sprintf("%s needs a value", a))
      v <- args[[i + 1]]
      key <- sub("-", "_", sub("^--", "", a))
      o[[key]] <- if (key %in% c("cache", "ess_csv")) v else as.integer(v)
      if (!(key %in% c("cache", "ess_csv")) && (is.na(o[[key]]) || o[[key]] < 0)) {
        stop(sprintf("%s must be a non-negative integer, got %s", a, v))
      }
      i <- i + 2
    } else if (a == "--exec") {
      o$exec <- TRUE
      i <- i + 1
    } else if (startsWith(a, "--")) {
      stop(sprintf("unknown flag %s", a))
    } else {
      o$tasks <- c(o$tasks, a)
      i <- i + 1
    }
  }
  o
}

# min bulk ESS and max R-hat over coordinates of an iterations x chains x d
# array.
summarise_draws_array <- function(arr) {
  d <- dim(arr)[3]
  ess <- vapply(seq_len(d), function(j) posterior::ess_bulk(arr[, , j]), 0)
  rhat <- vapply(seq_len(d), function(j) posterior::rhat(arr[, , j]), 0)
  list(ess_bulk = min(ess), rhat = max(rhat))
}

ess_of_csv <- function(path, chains) {
  z <- as.matrix(read.csv(path))
  if ("w" %in% colnames(z)) stop(sprintf("%s: weighted draws have no MCMC ESS", path))
  s <- nrow(z)
  if (chains < 1 || s %% chains != 0) stop(sprintf("%s: %d rows do not split into %d chains", path, s, chains))
  n <- s %/% chains
  arr <- array(NA_real_, c(n, chains, ncol(z)))
  for (c in seq_len(chains)) arr[, c, ] <- z[((c - 1) * n + 1):(c * n), , drop = FALSE]
  r <- summarise_draws_array(arr)
  cat(toJSON(list(file = path, draws_per_chain = n, chains = chains,
                  ess_bulk = r$ess_bulk, rhat = r$rhat), auto_unbox = TRUE, digits = NA), "\n")
}

# stan_data turns a parsed task JSON into the data block of
# typed_factor.stan.
stan_data <- function(task) {
  d <- as.integer(task$d)
  pr <- task$prior
  ptype <- switch(pr$type, diag_gaussian = 1L, diag_laplace = 2L, diag_student_t = 3L,
                  fullrank_gaussian = 4L, stop(sprintf("prior.type: unsupported %s", pr$type)))
  vec <- function(x) as.array(as.numeric(x))
  data <- list(d = d, prior_type = ptype, loc = vec(pr$loc),
               scale = if (is.null(pr$scale)) vec(rep(1, d)) else vec(pr$scale),
               prior_df = if (is.null(pr$df)) 1 else as.numeric(pr$df),
               precision = if (ptype == 4L) matrix(as.numeric(unlist(pr$precision)), d, d, byrow = TRUE)
                           else matrix(0, 0, 0))
  fs <- task$factors
  types <- vapply(fs, function(f) f$type, "")
  known <- c("lin_gaussian", "bernoulli_logit", "binomial_logit", "lin_student_t", "gaussian")
  bad <- setdiff(unique(types), known)
  if (length(bad) > 0) stop(sprintf("factors: unsupported type %s", bad[[1]]))
  pick <- function(tp) fs[types == tp]
  xmat <- function(g) {
    if (length(g) == 0) return(matrix(0, 0, d))
    matrix(as.numeric(unlist(lapply(g, function(f) f$x))), length(g), d, byrow = TRUE)
  }
  num <- function(g, k) vec(vapply(g, function(f) as.numeric(f[[k]]), 0))
  int <- function(g, k) as.array(as.integer(round(vapply(g, function(f) as.numeric(f[[k]]), 0))))
  g <- pick("lin_gaussian")
  data$n_lg <- length(g); data$x_lg <- xmat(g); data$y_lg <- num(g, "y"); data$sigma_lg <- num(g, "sigma")
  g <- pick("bernoulli_logit")
  data$n_bl <- length(g); data$x_bl <- xmat(g); data$y_bl <- int(g, "y")
  g <- pick("binomial_logit")
  data$n_bn <- length(g); data$x_bn <- xmat(g); data$y_bn <- int(g, "y"); data$trials_bn <- int(g, "trials")
  g <- pick("lin_student_t")
  data$n_st <- length(g); data$x_st <- xmat(g); data$y_st <- num(g, "y")
  data$sigma_st <- num(g, "sigma"); data$df_st <- num(g, "df")
  g <- pick("gaussian")
  data$n_g <- length(g)
  data$y_g <- if (length(g) == 0) matrix(0, 0, d) else
    matrix(as.numeric(unlist(lapply(g, function(f) f$y))), length(g), d, byrow = TRUE)
  data$sigma_g <- num(g, "sigma")
  data
}

# compiled_model compiles typed_factor.stan once and caches the result
# keyed by the program's md5, outside the repository.
compiled_model <- function(cache) {
  self <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  stan_file <- file.path(dirname(normalizePath(self)), "typed_factor.stan")
  key <- unname(tools::md5sum(stan_file))
  dir.create(cache, recursive = TRUE, showWarnings = FALSE)
  rds <- file.path(cache, sprintf("typed_factor-%s.rds", key))
  if (file.exists(rds)) return(readRDS(rds))
  message("compiling ", stan_file, " (once; cached in ", rds, ")")
  # Debian's r-cran-bh is an empty shell: the Boost headers live in
  # /usr/include (libboost-dev), where rstan does not look by default.
  if (!nzchar(rstan::rstan_options("boost_lib")) && file.exists("/usr/include/boost/version.hpp")) {
    rstan::rstan_options(boost_lib = "/usr/include")
  }
  m <- rstan::stan_model(stan_file, model_name = "typed_factor", auto_write = FALSE)
  saveRDS(m, rds)
  m
}

# sample_task runs Stan's NUTS on one task with afin's settings (chains
# at the prior location, diagonal metric, adapt_delta 0.8, depth 10) and
# returns the fit, the R process's CPU seconds and the summary numbers.
sample_task <- function(model, data, o, seed, draws_per_chain) {
  init <- lapply(seq_len(o$chains), function(i) list(z = data$loc)) # afin's default: the prior location
  cpu0 <- proc.time()
  fit <- rstan::sampling(model, data = data, chains = o$chains, cores = 1,
                         warmup = o$warmup, iter = o$warmup + draws_per_chain, seed = seed,
                         init = init, refresh = 0, verbose = FALSE,
                         control = list(adapt_delta = 0.8, max_treedepth = 10,
                                        metric = "diag_e"))
  cpu <- proc.time() - cpu0
  el <- rstan::get_elapsed_time(fit) # per chain: warmup, sample (Stan's own clock)
  sp_all <- rstan::get_sampler_params(fit, inc_warmup = TRUE)
  sp <- rstan::get_sampler_params(fit, inc_warmup = FALSE)
  arr <- rstan::extract(fit, pars = "z", permuted = FALSE) # iterations x chains x d
  r <- summarise_draws_array(arr)
  list(arr = arr, el = el, r = r,
       grads = sum(vapply(sp_all, function(s) sum(s[, "n_leapfrog__"]), 0)),
       sample_grads = sum(vapply(sp, function(s) sum(s[, "n_leapfrog__"]), 0)),
       r_cpu = unname(cpu[["user.self"]] + cpu[["sys.self"]]),
       divergences = sum(vapply(sp, function(s) sum(s[, "divergent__"]), 0)),
       step_size = mean(vapply(sp, function(s) s[1, "stepsize__"], 0)),
       accept_rate = mean(vapply(sp, function(s) mean(s[, "accept_stat__"]), 0)),
       tree_depth_mean = mean(vapply(sp, function(s) mean(s[, "treedepth__"]), 0)))
}

run_stan <- function(o) {
  suppressPackageStartupMessages(library(rstan))
  model <- compiled_model(o$cache)
  for (path in o$tasks) {
    task <- fromJSON(path, simplifyVector = FALSE)
    data <- stan_data(task)
    for (rep in seq_len(o$reps)) {
      seed <- o$seed + rep - 1L
      f <- sample_task(model, data, o, seed, o$draws)
      stan_sec <- sum(f$el)
      out <- list(
        task = path, rep = rep, seed = seed, chains = o$chains, warmup = o$warmup, draws = o$draws,
        grad_evals = f$grads, sampling_grad_evals = f$sample_grads,
        stan_seconds = stan_sec, stan_warmup_seconds = sum(f$el[, 1]),
        r_cpu_seconds = f$r_cpu,
        ess_bulk = f$r$ess_bulk, rhat = f$r$rhat,
        divergences = f$divergences, step_size = f$step_size,
        accept_rate = f$accept_rate, tree_depth_mean = f$tree_depth_mean,
        grads_per_sec = f$grads / stan_sec,
        ess_per_sec = f$r$ess_bulk / stan_sec,
        ess_per_grad = f$r$ess_bulk / f$grads)
      cat(toJSON(out, auto_unbox = TRUE, digits = NA), "\n")
    }
  }
}

# run_exec is the afin external-method protocol (README "External
# methods"): one task, one budget, draws and diagnostics to the paths afin
# gives. The budget counts draws in total over chains, as afin's nuts.
run_exec <- function(o) {
  env <- function(k) {
    v <- Sys.getenv(k)
    if (!nzchar(v)) stop(sprintf("$%s is not set (run through afin --method exec:stan)", k))
    v
  }
  budget <- as.numeric(env("AFIN_BUDGET"))
  if (is.na(budget) || budget < o$chains || budget %% o$chains != 0) {
    stop(sprintf("budget %s draws must be a positive multiple of %d chains", env("AFIN_BUDGET"), o$chains))
  }
  # afin's seeds are 64-bit; Stan takes a 31-bit one.
  seed <- as.integer(as.numeric(sub("^(.*)(.{9})$", "\\2", paste0("000000000", env("AFIN_SEED")))) %% 2147483647)
  suppressPackageStartupMessages(library(rstan))
  model <- compiled_model(o$cache)
  data <- stan_data(fromJSON(env("AFIN_TASK"), simplifyVector = FALSE))
  f <- sample_task(model, data, o, seed, budget %/% o$chains)
  d <- dim(f$arr)[3]
  z <- do.call(rbind, lapply(seq_len(o$chains), function(c) matrix(f$arr[, c, ], ncol = d))) # chains stacked
  colnames(z) <- paste0("z", seq_len(d))
  write.csv(z, env("AFIN_DRAWS_OUT"), row.names = FALSE, quote = FALSE)
  diag <- list(seconds = sum(f$el), diagnostics = list(
    grad_evals = f$grads, ess_bulk = f$r$ess_bulk, rhat = f$r$rhat, divergences = f$divergences,
    step_size = f$step_size, accept_rate = f$accept_rate, tree_depth_mean = f$tree_depth_mean,
    stan_warmup_seconds = sum(f$el[, 1]), r_cpu_seconds = f$r_cpu))
  writeLines(toJSON(diag, auto_unbox = TRUE, digits = NA), env("AFIN_DIAGNOSTICS_OUT"))
}

main <- function() {
  o <- parse_args(commandArgs(trailingOnly = TRUE))
  if (!is.null(o$ess_csv)) {
    ess_of_csv(o$ess_csv, o$chains)
  } else if (o$exec) {
    run_exec(o)
  } else {
    if (length(o$tasks) == 0) stop("no task files given (usage: stan_nuts.R [flags] TASK.json...)")
    run_stan(o)
  }
}

tryCatch(main(), error = function(e) {
  message("stan_nuts.R: ", conditionMessage(e))
  quit(status = 1)
})
