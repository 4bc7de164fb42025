package methods

import "strings"

// SlotsOf is the slot list of the named built-in method along ladder,
// known without building it (the AFIN adapters need no network for it):
// a benchmark records the failed units of a method that cannot run here
// at exactly the points it would have filled. ok is false for an
// external or unknown name, whose budget kind lives in a methods file.
func SlotsOf(name string, ladder []int) (slots []Slot, ok bool) {
	var m Method
	switch name {
	case "afin":
		m = afinMethod{}
	case "afin-snis":
		m = afinSNISMethod{}
	case "afin-imh":
		m = afinIMHMethod{}
	case "auto":
		m = autoMethod{}
	default:
		if strings.HasPrefix(name, ExecPrefix) {
			return nil, false
		}
		var err error
		if m, err = New(name, &Env{}); err != nil {
			return nil, false
		}
	}
	if len(ladder) == 0 {
		return nil, true
	}
	return m.Slots(ladder), true
}
