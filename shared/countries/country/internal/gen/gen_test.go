package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The committed dataset is exactly what the generator makes of the
// iso-codes files it records: when those files are installed (the same
// bytes), regenerating must reproduce iso_gen.go byte for byte.
func TestGeneratorReproducesCommittedFile(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join("..", "..", "iso_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	recorded := regexp.MustCompile(`var isoInputs = \[2\]string\{"([0-9a-f]{64})", "([0-9a-f]{64})"\}`).FindSubmatch(committed)
	if recorded == nil {
		t.Fatal("iso_gen.go records no input digests")
	}
	for i, name := range Inputs {
		b, err := os.ReadFile(filepath.Join(DefaultDir, name))
		if os.IsNotExist(err) {
			t.Skipf("%s is not installed (apt-get install iso-codes)", filepath.Join(DefaultDir, name))
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := Digest(b); got != string(recorded[i+1]) {
			t.Skipf("installed %s (sha256 %s) is not the one iso_gen.go was generated from (%s): run go generate ./shared/countries/country to update the dataset",
				name, got, recorded[i+1])
		}
	}
	got, err := Generate(DefaultDir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, committed) {
		t.Error("go generate ./shared/countries/country changes iso_gen.go: the committed dataset is not the generator's output")
	}
}
