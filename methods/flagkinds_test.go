package methods

import (
	"reflect"
	"testing"

	"github.com/afin-bench/afin/records"
)

// Every flag Raised can return is a kind records.FlagKinds lists (which
// the report's breakdown is built from), and every listed kind can be
// raised: a flag field added to Flags without a kind fails here.
func TestRaisedKindsAreListed(t *testing.T) {
	f := &Flags{}
	v := reflect.ValueOf(f).Elem()
	for i := range v.NumField() {
		switch fv := v.Field(i); fv.Kind() {
		case reflect.String:
			fv.SetString("why " + v.Type().Field(i).Name)
		case reflect.Slice:
			if v.Type().Field(i).Name != "Warnings" {
				fv.Set(reflect.ValueOf([]string{"why"}))
			}
		case reflect.Pointer:
			no := false
			fv.Set(reflect.ValueOf(&no))
		}
	}
	raised := f.Raised()
	listed := map[string]bool{}
	for _, k := range records.FlagKinds() {
		listed[k.Name] = true
		if _, ok := raised[k.Name]; !ok {
			t.Errorf("records.FlagKinds lists %s, which Flags never raises", k.Name)
		}
	}
	for k := range raised {
		if !listed[k] {
			t.Errorf("Flags raises %s, which records.FlagKinds does not list (the report would count it under its bare name)", k)
		}
	}
}
