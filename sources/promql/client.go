package promql

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// promAPI is the part of client_golang's v1.API this package uses. The
// client is "experimental" upstream (v1.25.0 changed Query from three to
// four results), so it stays behind this interface.
type promAPI interface {
	Query(ctx context.Context, query string, ts time.Time, opts ...v1.Option) (model.Value, v1.Warnings, v1.Infos, error)
	QueryRange(ctx context.Context, query string, r v1.Range, opts ...v1.Option) (model.Value, v1.Warnings, v1.Infos, error)
	LabelValues(ctx context.Context, label string, matches []string, start, end time.Time, opts ...v1.Option) (model.LabelValues, v1.Warnings, v1.Infos, error)
}

// newAPI returns the v1 API client for base over hc.
func newAPI(base *url.URL, hc *http.Client) (promAPI, error) {
	c, err := api.NewClient(api.Config{Address: base.String(), Client: hc})
	if err != nil {
		return nil, err
	}
	return v1.NewAPI(c), nil
}
