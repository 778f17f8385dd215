package gpu

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tokentop/tokentop/sanitize"
)

// smiQuery is the nvidia-smi query; parseSMILine expects its columns.
const smiQuery = "index,uuid,name,utilization.memory,memory.used,memory.total"

// parseSMILine parses one line of
// nvidia-smi --query-gpu=<smiQuery> --format=csv,noheader,nounits.
// utilization.memory is % of time memory was read or written (busy time);
// memory.* are MiB. "[N/A]"/"[Not Supported]" give NaN.
func parseSMILine(line, host string) (*reading, error) {
	fields := strings.Split(strings.TrimSpace(line), ",")
	if len(fields) != 6 {
		return nil, fmt.Errorf("nvidia-smi: want 6 fields, got %d in %q", len(fields), sanitize.Capped(line, 120))
	}
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	if _, err := strconv.Atoi(fields[0]); err != nil {
		return nil, fmt.Errorf("nvidia-smi: bad GPU index %q", sanitize.Capped(fields[0], 40))
	}
	r := newReading()
	r.host = host
	r.index = fields[0]
	r.uuid = sanitize.Text(fields[1])
	r.model = sanitize.Text(fields[2])
	r.labels["gpu"], r.labels["uuid"], r.labels["modelname"], r.labels["hostname"] = r.index, r.uuid, r.model, host
	r.key = host + "/" + r.uuid
	if r.uuid == "" {
		r.key = host + "/" + r.index
	}
	if v := smiNumber(fields[3]); !math.IsNaN(v) {
		r.busy = math.Min(math.Max(v/100, 0), 1)
	}
	r.fbUsed = smiNumber(fields[4])
	return r, nil
}

// smiNumber parses a value; "[N/A]", "[Not Supported]" and junk are NaN.
func smiNumber(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) {
		return math.NaN()
	}
	return v
}
