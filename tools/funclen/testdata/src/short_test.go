package src

// Test files are not read: this one spans 5 lines.
func longInTest() {
	_ = 1
	_ = 2
	_ = 3
}
