package countctx

import (
	"context"
	"errors"
	"testing"
)

func TestCancelAt(t *testing.T) {
	for _, at := range []int64{0, 1, 3} {
		c := CancelAt(at)
		for i := int64(1); i <= 5; i++ {
			err := c.Err()
			if want := at > 0 && i >= at; (err != nil) != want || want && !errors.Is(err, context.Canceled) {
				t.Errorf("at=%d: call %d: err %v", at, i, err)
			}
		}
		select {
		case <-c.Done():
			if at == 0 {
				t.Errorf("at=0: Done closed")
			}
		default:
			if at > 0 {
				t.Errorf("at=%d: Done not closed", at)
			}
		}
		if c.Calls() != 5 || at > 0 && c.After() != 5-at || at == 0 && c.After() != 0 {
			t.Errorf("at=%d: calls %d, after %d", at, c.Calls(), c.After())
		}
		c.Stop()
	}
}
