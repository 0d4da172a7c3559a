package architecture

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// maxMethods is the most methods one type of the aggregator may declare (issue 41: the reconciler in stages).
const maxMethods = 25

// methodCounts counts the methods each type declares in the non-test Go files of dir (not below it), by the
// receiver's type name, a pointer receiver and a value receiver alike.
func methodCounts(dir string) (map[string]int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	counts := map[string]int{}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", filepath.Join(dir, name), err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) == 0 {
				continue
			}
			counts[receiverType(fn.Recv.List[0].Type)]++
		}
	}
	return counts, nil
}

// receiverType names a receiver's type: T for T, *T, T[P] and *T[P].
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return fmt.Sprintf("%T", e)
		}
	}
}

// TestMethodsPerType holds every type of aggregator/ (its subpackages included) to maxMethods methods: the
// reconciler is a thin coordinator over stages, each a type with its own state (docs/development.md, methods per
// type).
func TestMethodsPerType(t *testing.T) {
	root := filepath.Join(testenv.RepoRoot(), "aggregator")
	var over []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		counts, err := methodCounts(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(testenv.RepoRoot(), path)
		for typ, n := range counts {
			t.Logf("%s.%s: %d methods", rel, typ, n)
			if n > maxMethods {
				over = append(over, fmt.Sprintf("%s.%s has %d methods", rel, typ, n))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(over)
	if len(over) > 0 {
		t.Errorf("types over %d methods (split them into stages with their own state):\n%s", maxMethods, strings.Join(over, "\n"))
	}
}

// TestMethodCounts shows that the counter counts what it should: pointer and value receivers, generic receivers,
// not functions, not test files.
func TestMethodCounts(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.go":      "package p\ntype A struct{}\nfunc (a *A) one() {}\nfunc (A) two() {}\nfunc free() {}\n",
		"b.go":      "package p\ntype G[T any] struct{}\nfunc (g *G[T]) one() {}\nfunc (a *A) three() {}\n",
		"b_test.go": "package p\nfunc (a *A) test() {}\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := methodCounts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"A": 3, "G": 1}, got); diff != "" {
		t.Errorf("method counts (-want +got):\n%s", diff)
	}
}
