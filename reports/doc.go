// Package reports turns a results store (package bench) into the paper's
// figures and tables: one self-contained index.html drawn with go-echarts
// (the ECharts library is inlined from assets/, so the page works
// offline), with M1, M2 and SW2 against wall-clock time on log–log axes,
// mean curves with budget-labelled points and ±1 sd bands over seeds
// (captions say "1 seed" when there is no band to draw), overall and per
// difficulty, and the SNIS refinement curves with the proposal stars; and
// the tables (headline, per setting, reference quality, SNIS diagnostics,
// extrapolation) for the terminal (tablewriter), Markdown and LaTeX
// (booktabs). Every number of this run comes from the records; the
// paper's published numbers, shown beside them with the difference, come
// from paper_values.json, each with the LaTeX label of its table. A
// banner names the checkpoint behind the AFIN numbers (Banner).
//
// What a report does with a suite's records is read from the suite
// registry (package suite), not from a list of names here: a suite's
// Scoring decides whether its records enter the accuracy gate, the
// comparison and the workflow table. A suite's section is drawn by the
// builder keyed by its name in sectionLayouts (report order), or by the
// generic section when it has none; a suite's own gate for `afin check`
// is keyed the same way (suiteGates). These are keyed from this side
// because reports must not import bench, which runs methods.
package reports
