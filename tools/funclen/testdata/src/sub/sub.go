package sub

// five spans 5 lines.
func five() {
	_ = 1
	_ = 2
	_ = 3
}
