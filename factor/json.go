package factor

import "errors"

// ParseTask is a placeholder until the task JSON reader lands.
func ParseTask(data []byte) (*Task, error) { return nil, errors.New("not built yet") }
