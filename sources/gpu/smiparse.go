package gpu

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ttftop/ttftop/sanitize"
)

// smiQuery is the nvidia-smi query; parseSMILine expects its columns.
const smiQuery = "index,uuid,name,utilization.memory,memory.used,memory.total,utilization.gpu,power.draw,power.limit,temperature.gpu"

// smiFields is the number of columns of smiQuery.
const smiFields = 10

// parseSMILine parses one line of
// nvidia-smi --query-gpu=<smiQuery> --format=csv,noheader,nounits.
// utilization.memory is % of time memory was read or written (busy time);
// utilization.gpu % of time a kernel ran; memory.* are MiB, power.* W,
// temperature.gpu °C. "[N/A]"/"[Not Supported]" give NaN.
func parseSMILine(line, host string) (*reading, error) {
	fields := strings.Split(strings.TrimSpace(line), ",")
	if len(fields) != smiFields {
		return nil, fmt.Errorf("nvidia-smi: want %d fields, got %d in %q", smiFields, len(fields), sanitize.Capped(line, 120))
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
	r.fbTotal = smiNumber(fields[5])
	if v := smiNumber(fields[6]); !math.IsNaN(v) {
		r.util = math.Min(v/100, 1)
	}
	r.power, r.powerLimit, r.temp = smiNumber(fields[7]), smiNumber(fields[8]), smiNumber(fields[9])
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
