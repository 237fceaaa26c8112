package textile

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"
)

var renderTests = []struct {
	name, in, want string
}{
	// Paragraphs and line breaks.
	{"empty", "", ""},
	{"blank", " \n\t\r\n ", ""},
	{"plain", "hello", "<p>hello</p>"},
	{"trimmed", "  hello  \n\n", "<p>hello</p>"},
	{"paragraphs", "one\n\ntwo", "<p>one</p>\n<p>two</p>"},
	{"many blank lines", "one\n\n \n\t\n\ntwo", "<p>one</p>\n<p>two</p>"},
	{"line break", "one\ntwo", "<p>one<br />\ntwo</p>"},
	{"crlf", "one\r\ntwo\r\n\r\nthree", "<p>one<br />\ntwo</p>\n<p>three</p>"},
	{"lone cr", "one\rtwo", "<p>one<br />\ntwo</p>"},

	// Strong and em.
	{"strong", "a *bold* b", "<p>a <strong>bold</strong> b</p>"},
	{"em", "an _em_ word", "<p>an <em>em</em> word</p>"},
	{"strong words", "*two words*", "<p><strong>two words</strong></p>"},
	{"strong punctuation", "(*yes*), _no_!", "<p>(<strong>yes</strong>), <em>no</em>!</p>"},
	{"nested", "*bold _and em_*", "<p><strong>bold <em>and em</em></strong></p>"},
	{"arithmetic", "2*3*4", "<p>2*3*4</p>"},
	{"snake case", "snake_case_name", "<p>snake_case_name</p>"},
	{"dunder", "__init__ and **x**", "<p>__init__ and **x**</p>"},
	{"space inside", "a * b * c and _ d _", "<p>a * b * c and _ d _</p>"},
	{"unclosed", "*open and _open", "<p>*open and _open</p>"},
	{"crossed", "*a _b* c_", "<p><strong>a _b</strong> c_</p>"},
	{"not across lines", "*a\nb*", "<p>*a<br />\nb*</p>"},
	{"closer inside word", "*foo*bar*", "<p><strong>foo*bar</strong></p>"},
	{"lone marker", "*", "<p>*</p>"},
	{"unicode em", "très _ünïcødé_ 日本*語*", "<p>très <em>ünïcødé</em> 日本*語*</p>"},

	// Links.
	{"link", `see "Shopify":https://shopify.com now`, `<p>see <a href="https://shopify.com">Shopify</a> now</p>`},
	{"http link", `"x":http://a.example/p?q=1&r=2`, `<p><a href="http://a.example/p?q=1&amp;r=2">x</a></p>`},
	{"mailto", `"mail me":mailto:me@example.com`, `<p><a href="mailto:me@example.com">mail me</a></p>`},
	{"upper scheme", `"x":HTTPS://a.example`, `<p><a href="https://a.example">x</a></p>`},
	{"trailing period", `"x":http://a.example.`, `<p><a href="http://a.example">x</a>.</p>`},
	{"trailing comma", `"x":http://a.example, y`, `<p><a href="http://a.example">x</a>, y</p>`},
	{"trailing paren", `(see "x":http://a.example)`, `<p>(see <a href="http://a.example">x</a>)</p>`},
	{"balanced paren", `"x":http://w.example/Foo_(bar)`, `<p><a href="http://w.example/Foo_(bar)">x</a></p>`},
	{"strong link text", `"*big*":http://a.example`, `<p><a href="http://a.example"><strong>big</strong></a></p>`},
	{"link in em", `_"x":http://a.example/snake_case_`, `<p><em><a href="http://a.example/snake_case">x</a></em></p>`},
	{"underscores in url", `"x":http://a.example/_b_`, `<p><a href="http://a.example/_b_">x</a></p>`},
	{"empty link text", `"":http://a.example`, `<p>&#34;&#34;:http://a.example</p>`},
	{"bare scheme", `"x":http://`, `<p>&#34;x&#34;:http://</p>`},
	{"relative", `"x":/admin`, `<p>&#34;x&#34;:/admin</p>`},
	{"quotes", `she said "hi"`, `<p>she said &#34;hi&#34;</p>`},

	// Hostile input.
	{"script", "<script>alert(1)</script>", "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"},
	{"html", `<b onclick='x'>&amp;</b>`, "<p>&lt;b onclick=&#39;x&#39;&gt;&amp;amp;&lt;/b&gt;</p>"},
	{"javascript", `"x":javascript:alert(1)`, `<p>&#34;x&#34;:javascript:alert(1)</p>`},
	{"javascript mixed case", `"x":JaVaScRiPt:alert(1)`, `<p>&#34;x&#34;:JaVaScRiPt:alert(1)</p>`},
	{"data", `"x":data:text/html,<script>`, `<p>&#34;x&#34;:data:text/html,&lt;script&gt;</p>`},
	{"vbscript", `"x":vbscript:msgbox`, `<p>&#34;x&#34;:vbscript:msgbox</p>`},
	{"scheme in path", `"x":http:javascript:alert(1)`, `<p>&#34;x&#34;:http:javascript:alert(1)</p>`},
	{"attribute breakout", `"x":http://a" onmouseover="b`, `<p><a href="http://a&#34;">x</a> onmouseover=&#34;b</p>`},
	{"html in link", `"<img src=x onerror=y>":http://a/<script>`, `<p><a href="http://a/&lt;script&gt;">&lt;img src=x onerror=y&gt;</a></p>`},
	{"strong html", "*<b>*", "<p><strong>&lt;b&gt;</strong></p>"},
	{"em script", "_<script>_", "<p><em>&lt;script&gt;</em></p>"},
	{"nested unbalanced", "*_*_ _*_*", "<p><strong>_</strong>_ <em>*</em>*</p>"},
	{"deep nesting", "*_*_x_*_*", "<p><strong>_</strong><em>x</em><strong>_</strong></p>"},
	{"same tag nested", "*a _b *c _d_ c* b_ a*", "<p><strong>a <em>b *c _d</em> c</strong> b_ a*</p>"},
	{"em strong", "_*both*_", "<p><em><strong>both</strong></em></p>"},
	{"invalid utf8", "a\xffb", "<p>a\uFFFDb</p>"},
	{"comment", "<!-- x --><![CDATA[y]]>", "<p>&lt;!-- x --&gt;&lt;![CDATA[y]]&gt;</p>"},
	{"entities", "&lt;b&gt; &#60;", "<p>&amp;lt;b&amp;gt; &amp;#60;</p>"},
}

func TestRender(t *testing.T) {
	for _, tt := range renderTests {
		t.Run(tt.name, func(t *testing.T) {
			got := Render(tt.in)
			if got != tt.want {
				t.Errorf("Render(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if err := checkHTML(got); err != nil {
				t.Errorf("Render(%q) = %q: %v", tt.in, got, err)
			}
		})
	}
}

// TestRenderHostileSize guards against quadratic blow-ups on long lines
// of markers that open but never close (these once took seconds).
func TestRenderHostileSize(t *testing.T) {
	for _, unit := range []string{"*a ", " *a", `"a":`, `"a":http://`, "*_", "(*a _b ", `"x":http://a)`} {
		in := strings.Repeat(unit, 200_000/len(unit))
		start := time.Now()
		Render(in)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Render(%q × %d) took %v", unit, 200_000/len(unit), d)
		}
	}
}

func FuzzRender(f *testing.F) {
	for _, tt := range renderTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Render(in)
		if err := checkHTML(out); err != nil {
			t.Fatalf("Render(%q) = %q: %v", in, out, err)
		}
		if again := Render(in); again != out {
			t.Fatalf("Render(%q) not deterministic: %q then %q", in, out, again)
		}
		if !utf8.ValidString(out) {
			t.Fatalf("Render(%q) = %q: invalid UTF-8", in, out)
		}
	})
}

// checkHTML is the fuzz oracle. It tokenizes s with an HTML5 tokenizer
// (golang.org/x/net/html, as a browser would read it in body text) and
// reports an error unless every element is p, br, strong, em or a, the only
// attribute is href on a, every href (entity-decoded) is an http,
// https or mailto URL, no text holds a raw '<' or '>', there is no comment
// or doctype, and tags nest properly.
func checkHTML(s string) error {
	z := html.NewTokenizer(strings.NewReader(s))
	var open []string
	read := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				return z.Err()
			}
			if read != len(s) {
				return fmt.Errorf("unterminated markup at %d", read)
			}
			break
		}
		raw := z.Raw()
		at := read
		read += len(raw)
		switch tt {
		case html.TextToken:
			if bytes.ContainsAny(raw, "<>") {
				return fmt.Errorf("raw '<' or '>' in text at %d", at)
			}
			continue
		case html.CommentToken, html.DoctypeToken:
			return fmt.Errorf("%v at %d", tt, at)
		}
		// A repeated attribute is dropped by the tokenizer, as a browser
		// drops it: what is checked is what a browser would use.
		rawName, more := z.TagName()
		name := string(rawName)
		var attrs [][2]string
		for more {
			var k, v []byte
			k, v, more = z.TagAttr()
			attrs = append(attrs, [2]string{string(k), string(v)})
		}
		switch name {
		case "p", "strong", "em", "a":
		case "br":
			if tt == html.EndTagToken {
				return fmt.Errorf("</br> at %d", at)
			}
		default:
			return fmt.Errorf("element %q", name)
		}
		hrefs := 0
		for _, a := range attrs {
			if name != "a" || a[0] != "href" || tt == html.EndTagToken {
				return fmt.Errorf("attribute %q on %q", a[0], name)
			}
			hrefs++
			if !strings.HasPrefix(a[1], "http://") && !strings.HasPrefix(a[1], "https://") && !strings.HasPrefix(a[1], "mailto:") {
				return fmt.Errorf("href %q", a[1])
			}
		}
		switch {
		case name == "br":
		case tt == html.SelfClosingTagToken:
			return fmt.Errorf("self-closing <%s> at %d", name, at)
		case tt == html.StartTagToken:
			if name == "a" && hrefs == 0 {
				return fmt.Errorf("a without href")
			}
			open = append(open, name)
		case len(open) == 0 || open[len(open)-1] != name:
			return fmt.Errorf("</%s> closes %v", name, open)
		default:
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("unclosed %v", open)
	}
	return nil
}

// TestCheckHTML makes sure the oracle rejects what it must.
func TestCheckHTML(t *testing.T) {
	bad := []string{
		"<script>x</script>",
		"<p onclick=x>y</p>",
		`<a href="javascript:x">y</a>`,
		`<a href="&#106;avascript:x">y</a>`,
		`<a href=x>y</a>`,
		`<a>y</a>`,
		`<a href="javascript:y" href="http://x">z</a>`, // a browser keeps the first
		"<img src=x>",
		"<STRONG style=x>y</STRONG>",
		"<p>a < b</p>",
		"<p>a > b</p>",
		"<!-- x -->",
		"<p><em>x</p></em>",
		"<p>x",
		"<p",
		`<a href="http://x>y</a>`,
	}
	for _, s := range bad {
		if checkHTML(s) == nil {
			t.Errorf("checkHTML(%q) = nil, want error", s)
		}
	}
	good := `<p>a &lt; <strong>b</strong><br />` + "\n" + `<em><a href="mailto:x&#34;">y</a></em></p>`
	if err := checkHTML(good); err != nil {
		t.Errorf("checkHTML(%q) = %v", good, err)
	}
}
