// logfmt_decode reads logfmt lines on stdin with go-logfmt (the decoder behind go-kit/log, which
// Prometheus exporters log through) and prints each record as one JSON object of its keys and
// values, so tests can compare hucprof's logfmt with an implementation not written here.
// A line go-logfmt cannot decode is an error: exit 1 naming the line.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/go-logfmt/logfmt"
)

func main() {
	decoder := logfmt.NewDecoder(bufio.NewReaderSize(os.Stdin, 1<<20))
	out := json.NewEncoder(os.Stdout)
	line := 0
	for decoder.ScanRecord() {
		line++
		record := map[string]string{}
		for decoder.ScanKeyval() {
			record[string(decoder.Key())] = string(decoder.Value())
		}
		if err := decoder.Err(); err != nil {
			fmt.Fprintf(os.Stderr, "line %d: %v\n", line, err)
			os.Exit(1)
		}
		if err := out.Encode(record); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := decoder.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "line %d: %v\n", line+1, err)
		os.Exit(1)
	}
}
