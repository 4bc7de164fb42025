package src

// short spans 3 lines.
func short() int {
	return 1
}

// method spans 4 lines.
func (t *T) method() int {
	x := 1
	return x
}

type T struct{}
