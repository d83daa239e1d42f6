package logging

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestQuietWhenStopping(t *testing.T) {
	failure := errors.New("the API server refused")
	for _, tc := range []struct {
		name    string
		ctx     func() context.Context
		err     error
		wantErr error
	}{
		{name: "live context: the error is returned", ctx: context.Background, err: failure, wantErr: failure},
		{name: "live context, no error", ctx: context.Background},
		{name: "canceled context: no error", ctx: canceled, err: fmt.Errorf("get root: %w", context.Canceled)},
		{name: "canceled context, any error: no error", ctx: canceled, err: failure},
		{name: "past a deadline: the error is returned", ctx: pastDeadline,
			err: context.DeadlineExceeded, wantErr: context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
				return reconcile.Result{RequeueAfter: time.Second}, tc.err
			})
			result, err := QuietWhenStopping(inner).Reconcile(tc.ctx(), reconcile.Request{})
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			stopped := tc.err != nil && tc.wantErr == nil
			if want := (reconcile.Result{RequeueAfter: time.Second}); !stopped && result != want {
				t.Errorf("result %+v, want the inner reconciler's %+v", result, want)
			}
			if stopped && result != (reconcile.Result{}) {
				t.Errorf("result %+v, want no requeue once stopping", result)
			}
		})
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func pastDeadline() context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	_ = cancel // canceling would make ctx.Err() Canceled; the deadline has passed already
	return ctx
}
