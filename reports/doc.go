// Package reports turns a results store (package bench) into the paper's
// figures and tables: one self-contained index.html drawn with go-echarts
// (the ECharts library is inlined from assets/, so the page works
// offline), with M1, M2 and SW2 against wall-clock time on log–log axes,
// mean curves and ±1 sd bands over seeds, overall and per difficulty, and
// the SNIS refinement curves with the proposal stars; and the tables
// (headline, SNIS diagnostics, extrapolation) for the terminal
// (tablewriter), Markdown and LaTeX (booktabs). Every number comes from
// the records; nothing is typed in.
package reports
