// profile_scraper fetches a pprof profile the way Parca's and Grafana Alloy's scrapers do, and
// checks it as they check it, so a test can replay their exact requests against hucprof:
//   - the HTTP client of prometheus/common (config.NewClientFromConfig), which both use:
//     DisableCompression (no Accept-Encoding is sent, nothing is decoded), keep-alive, HTTP/1.1
//     on plain HTTP, their User-Agent;
//   - one GET of the target URL (path plus ?seconds=N for a delta profile) under a context
//     deadline of the scrape timeout (Alloy adds interval - 1 s to it for delta targets);
//   - the response: status 2xx; Alloy's validateProfileData (Content-Type application/octet-stream,
//     not an HTML or JSON page, gzip or protobuf); then profile.ParseData, what Parca stores
//     and what Pyroscope's ingester parses.
//
// Usage: profile_scraper -url URL -timeout 13s -user-agent conprof/v0.x [-source 127.0.0.2]
// (-source: the local address to connect from, as the scraper's own host would.)
// Prints one JSON object: what was sent and received, the profile's sample types, samples, and
// the sum of each sample type per value of -label. Exit status 0 on a profile that passes every
// check, 1 otherwise (the JSON says why).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

type result struct {
	URL           string                      `json:"url"`
	SentHeaders   map[string][]string         `json:"sent_headers"`
	Status        int                         `json:"status"`
	ContentType   string                      `json:"content_type"`
	BodyBytes     int                         `json:"body_bytes"`
	Gzip          bool                        `json:"gzip"`
	ElapsedS      float64                     `json:"elapsed_s"`
	SampleTypes   []string                    `json:"sample_types"`
	Samples       int                         `json:"samples"`
	ByLabel       map[string]map[string]int64 `json:"by_label"`
	DurationNanos int64                       `json:"duration_nanos"`
	Error         string                      `json:"error,omitempty"`
}

func main() {
	url := flag.String("url", "", "profile URL with its query")
	timeout := flag.Duration("timeout", 10*time.Second, "the scrape timeout")
	userAgent := flag.String("user-agent", "", "User-Agent of the scraper")
	label := flag.String("label", "callsite", "pprof label to sum each sample type by")
	source := flag.String("source", "", "local IP address to connect from (default: any)")
	flag.Parse()

	r := result{URL: *url, ByLabel: map[string]map[string]int64{}}
	err := scrape(&r, *timeout, *userAgent, *label, *source)
	if err != nil {
		r.Error = err.Error()
	}
	out, _ := json.Marshal(r)
	fmt.Println(string(out))
	if err != nil {
		os.Exit(1)
	}
}

func scrape(r *result, timeout time.Duration, userAgent, label, source string) error {
	dialer := &net.Dialer{}
	if source != "" {
		ip := net.ParseIP(source)
		if ip == nil {
			return fmt.Errorf("-source %q is not an IP address", source)
		}
		dialer.LocalAddr = &net.TCPAddr{IP: ip}
	}
	// prometheus/common config/http_config.go's transport, as far as a request shows it.
	client := &http.Client{Transport: &http.Transport{
		DialContext:         dialer.DialContext,
		DisableCompression:  true,
		MaxIdleConns:        20000,
		MaxIdleConnsPerHost: 1000,
		IdleConnTimeout:     5 * time.Minute,
		TLSHandshakeTimeout: 10 * time.Second,
	}}
	req, err := http.NewRequest("GET", r.URL, nil)
	if err != nil {
		return err
	}
	if userAgent != "" {
		req.Header.Set("User-Agent", userAgent)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// What went on the wire (the transport adds Host, User-Agent and nothing else here).
	trace := &httptrace.ClientTrace{
		WroteHeaderField: func(key string, value []string) { r.SentHeaders[key] = value },
	}
	r.SentHeaders = map[string][]string{}
	req = req.WithContext(httptrace.WithClientTrace(ctx, trace))
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		r.ElapsedS = time.Since(start).Seconds()
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	r.ElapsedS = time.Since(start).Seconds()
	r.Status = resp.StatusCode
	r.ContentType = resp.Header.Get("Content-Type")
	r.BodyBytes = len(body)
	if err != nil {
		return fmt.Errorf("failed to read body: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("server returned HTTP status (%d) %s", resp.StatusCode,
			strings.TrimSpace(string(body)))
	}
	if len(body) == 0 {
		return fmt.Errorf("empty profile")
	}
	// Alloy's validateProfileData.
	if !strings.HasPrefix(r.ContentType, "application/octet-stream") {
		return fmt.Errorf("unexpected Content-Type %q, expected application/octet-stream", r.ContentType)
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && (trimmed[0] == '<' || trimmed[0] == '{' || trimmed[0] == '[') {
		return fmt.Errorf("text response instead of pprof")
	}
	r.Gzip = len(body) > 2 && body[0] == 0x1f && body[1] == 0x8b
	if !r.Gzip && body[0]&0x07 >= 6 {
		return fmt.Errorf("invalid protobuf data: illegal wireType %d", body[0]&0x07)
	}
	// Parca's processScrapeResp.
	p, err := profile.ParseData(body)
	if err != nil {
		return fmt.Errorf("failed to parse profile data: %w", err)
	}
	if err := p.CheckValid(); err != nil {
		return fmt.Errorf("profile is not valid: %w", err)
	}
	r.DurationNanos = p.DurationNanos
	for _, st := range p.SampleType {
		r.SampleTypes = append(r.SampleTypes, st.Type+"/"+st.Unit)
		r.ByLabel[st.Type] = map[string]int64{}
	}
	r.Samples = len(p.Sample)
	for _, s := range p.Sample {
		key := strings.Join(s.Label[label], ",")
		for i, st := range p.SampleType {
			r.ByLabel[st.Type][key] += s.Value[i]
		}
	}
	return nil
}
