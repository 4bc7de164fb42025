package methods

// NewSNISDiagnosticsForTest exposes the one SNIS diagnostics builder to
// the external tests.
var NewSNISDiagnosticsForTest = newSNISDiagnostics
