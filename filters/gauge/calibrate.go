package gauge

import (
	"io"
	"math"

	"github.com/bstools/bs/filters/transcript"
)

// Calibration compares the estimator with what the provider reported:
// for each pair of consecutive usage readings with no compaction between
// them, the real growth of the context against the estimate of the lines
// that made it grow.
type Calibration struct {
	Pairs          int     `json:"pairs"`
	MeanAbsError   float64 `json:"mean_abs_error"`   // mean of |estimate-real|/real
	WorstError     float64 `json:"worst_error"`      // the largest |estimate-real|/real, signed
	WorstLine      int     `json:"worst_line"`       // the usage line where it happened
	TotalError     float64 `json:"total_error"`      // (summed estimates - summed growth) / summed growth
	RealTokens     int     `json:"real_tokens"`      // summed real growth
	EstimateTokens int     `json:"estimated_tokens"` // summed estimates
	Estimator      string  `json:"estimator"`
}

// Calibrate reads a transcript and measures the estimator against usage.
func Calibrate(name string, r io.Reader, opt Options) (Calibration, error) {
	opt = withDefaults(opt)
	c := Calibration{Estimator: opt.Estimator.Name()}
	src := transcript.NewSource(name, r, opt.Format, opt.OnBadLine)
	last, have, est := 0, false, 0
	sum := 0.0
	for {
		line, t, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return c, err
		}
		if t == nil {
			continue
		}
		l := Classify(t, src.Dialect(), opt.Estimator)
		switch l.Role {
		case Compaction:
			have = false
		case Content:
			est += l.Estimate
		case Usage:
			est += l.Estimate
			if real := l.Tokens - last; have && real > 0 {
				e := float64(est-real) / float64(real)
				c.Pairs++
				sum += math.Abs(e)
				c.RealTokens += real
				c.EstimateTokens += est
				if math.Abs(e) > math.Abs(c.WorstError) {
					c.WorstError, c.WorstLine = e, line.Num
				}
			}
			last, have, est = l.Tokens, true, 0
		}
	}
	if c.Pairs > 0 {
		c.MeanAbsError = sum / float64(c.Pairs)
		c.TotalError = float64(c.EstimateTokens-c.RealTokens) / float64(c.RealTokens)
	}
	return c, nil
}
