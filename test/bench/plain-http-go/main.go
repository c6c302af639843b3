// One stock HTTP client of the plain-http suite (test/bench/plain-http.ts), in its own process: Go's standard
// net/http with its default client and transport, untuned (at most 2 idle connections kept per host, so a burst
// opens new connections and most are closed after their answer). `<url> <topic> open <rate> <seconds>` (open
// loop: each 1 KiB JSON `POST /send` leaves on its schedule from a goroutine of its own, whatever the ones before
// it did) or `<url> <topic> closed <senders> <seconds>` (closed loop: the capacity). Prints `RESULT {ok, busy,
// other, errors, okMs, busyMs, lagMs, callMs, okCallMs, busyCallMs, busyWhy, cpuSeconds, seconds}` as the fetch
// client does: the answers' times in ms from each send's scheduled start (sorted), how late each send left, every
// answer's, OK's and refusal's time from its call, and the refusals by reason.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type tally struct {
	mu                                                sync.Mutex
	ok, busy, other, errors                           int
	okMs, busyMs, lagMs, callMs, okCallMs, busyCallMs []float64
	errorKinds                                        map[string]int
	busyWhy                                           map[string]int
}

// The load shedder's reason, read from a SYSTEM_BUSY answer's message (lib/http/load-shedder.ts words them), as
// plain-http-fetch.ts reads it.
func refusalReason(message string) string {
	switch {
	case strings.Contains(message, "event loop runs"):
		return "loop lag"
	case strings.Contains(message, "ms of work"):
		return "expected wait"
	case strings.Contains(message, "requests are waiting"):
		return "line full"
	case strings.Contains(message, "for its turn"):
		return "waited past the bound"
	}
	return "other"
}

// The client: Go's default one, or with PLAIN_HTTP_GO_POOL=n (the suite's --go-pool) a transport that keeps up to n
// connections open and opens no more (what docs/api.md advises a busy client to do).
var client = http.DefaultClient

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (t *tally) send(url string, body []byte, due time.Time) {
	called := time.Now()
	res, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.mu.Lock()
		t.errors++
		kind := err.Error()
		if i := strings.LastIndex(kind, ": "); i >= 0 {
			kind = kind[i+2:]
		}
		if len(kind) > 40 {
			kind = kind[:40]
		}
		if len(t.errorKinds) < 16 || t.errorKinds[kind] > 0 {
			t.errorKinds[kind]++
		}
		t.lagMs = append(t.lagMs, ms(called.Sub(due)))
		t.mu.Unlock()
		return
	}
	answer, readErr := io.ReadAll(res.Body)
	res.Body.Close()
	done := time.Now()
	var parsed struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	parseErr := json.Unmarshal(answer, &parsed)
	t.mu.Lock()
	defer t.mu.Unlock()
	if readErr != nil || parseErr != nil {
		// As the fetch client counts an answer it cannot read as JSON: a connection error.
		t.errors++
		t.lagMs = append(t.lagMs, ms(called.Sub(due)))
		return
	}
	t.lagMs = append(t.lagMs, ms(called.Sub(due)))
	t.callMs = append(t.callMs, ms(done.Sub(called)))
	switch {
	case res.StatusCode == http.StatusOK:
		t.ok++
		t.okMs = append(t.okMs, ms(done.Sub(due)))
		t.okCallMs = append(t.okCallMs, ms(done.Sub(called)))
	case parsed.Code == "SYSTEM_BUSY":
		t.busy++
		t.busyMs = append(t.busyMs, ms(done.Sub(due)))
		t.busyCallMs = append(t.busyCallMs, ms(done.Sub(called)))
		t.busyWhy[refusalReason(parsed.Message)]++
	default:
		t.other++
	}
}

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: plain-http-go <url> <topic> open|closed <rate|senders> <seconds>")
		os.Exit(2)
	}
	base, topic, mode := os.Args[1], os.Args[2], os.Args[3]
	count, err1 := strconv.Atoi(os.Args[4])
	seconds, err2 := strconv.ParseFloat(os.Args[5], 64)
	if err1 != nil || err2 != nil || count < 1 || seconds <= 0 || (mode != "open" && mode != "closed") {
		fmt.Fprintln(os.Stderr, "plain-http-go: bad arguments")
		os.Exit(2)
	}
	if pool, err := strconv.Atoi(os.Getenv("PLAIN_HTTP_GO_POOL")); err == nil && pool > 0 {
		transport := http.DefaultTransport.(*http.Transport).Clone()
		transport.MaxConnsPerHost = pool
		transport.MaxIdleConnsPerHost = pool
		client = &http.Client{Transport: transport}
	}
	message := map[string]any{"body": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("a"), 1024))}
	body, _ := json.Marshal(map[string]any{"topic": topic, "messages": []any{message}})
	url := base + "/send"
	t := &tally{errorKinds: map[string]int{}, busyWhy: map[string]int{}}
	var wg sync.WaitGroup
	started := time.Now()
	if mode == "open" {
		total := int(float64(count) * seconds)
		for i := 0; i < total; i++ {
			due := started.Add(time.Duration(float64(i) * float64(time.Second) / float64(count)))
			if wait := time.Until(due); wait > 0 {
				time.Sleep(wait)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.send(url, body, due)
			}()
		}
	} else {
		end := started.Add(time.Duration(seconds * float64(time.Second)))
		for i := 0; i < count; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(end) {
					t.send(url, body, time.Now())
				}
			}()
		}
	}
	wg.Wait()
	elapsed := time.Since(started).Seconds()
	if t.errors > 0 {
		kinds, _ := json.Marshal(t.errorKinds)
		fmt.Fprintf(os.Stderr, "plain go: connection errors %s\n", kinds)
	}
	var usage syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &usage)
	cpu := float64(usage.Utime.Nano()+usage.Stime.Nano()) / 1e9
	for _, list := range [][]float64{t.okMs, t.busyMs, t.lagMs, t.callMs, t.okCallMs, t.busyCallMs} {
		sort.Float64s(list)
	}
	orEmpty := func(l []float64) []float64 {
		if l == nil {
			return []float64{}
		}
		return l
	}
	result := map[string]any{
		"ok": t.ok, "busy": t.busy, "other": t.other, "errors": t.errors,
		"okMs": orEmpty(t.okMs), "busyMs": orEmpty(t.busyMs), "lagMs": orEmpty(t.lagMs), "callMs": orEmpty(t.callMs),
		"okCallMs": orEmpty(t.okCallMs), "busyCallMs": orEmpty(t.busyCallMs), "busyWhy": t.busyWhy,
		"cpuSeconds": cpu, "seconds": elapsed,
	}
	out, _ := json.Marshal(result)
	fmt.Println("RESULT " + string(out))
}
