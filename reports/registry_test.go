package reports

// The report reads methods' labels, colours and roles from the catalog,
// which package methods fills at init. The afin binary links methods;
// these tests link it here, so reports itself stays free of the methods'
// code (and of GoMLX).
import _ "github.com/afin-bench/afin/methods"
