// Package textile renders the small subset of Textile markup that blog
// comments accept into safe HTML (a comment's body_html).
//
// It is hand-written because there is no maintained Go Textile library and
// the subset is small: paragraphs and line breaks, *strong*, _em_ and
// "text":url links to http, https and mailto URLs. Everything else, including
// any HTML in the body, is escaped text, so the output holds no element other
// than p, br, strong, em and a, and no attribute other than a's href.
package textile

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Render turns a comment body into HTML. Blocks separated by blank lines
// become paragraphs and single newlines within a block become <br />. An
// empty (or all-whitespace) body renders "".
func Render(body string) string {
	body = strings.ToValidUTF8(body, "\uFFFD")
	body = strings.ReplaceAll(body, "\r\n", "\n")
	body = strings.ReplaceAll(body, "\r", "\n")
	var paras []string
	var lines []string
	flush := func() {
		if len(lines) > 0 {
			paras = append(paras, "<p>"+strings.Join(lines, "<br />\n")+"</p>")
			lines = nil
		}
	}
	for text := range strings.SplitSeq(body, "\n") {
		text = strings.TrimSpace(text)
		if text == "" {
			flush()
			continue
		}
		lines = append(lines, renderLine(text))
	}
	flush()
	return strings.Join(paras, "\n")
}

// renderLine renders one line: links and strong/em spans; the rest is
// escaped. The work is linear in the line's length: each span's closer is
// looked up in a table rather than searched for.
func renderLine(s string) string {
	l := line{s: s, close: map[byte][]int{'*': closers(s, '*'), '_': closers(s, '_')}}
	return l.inline(0, len(s))
}

type line struct {
	s string
	// close[m][j] is the first index >= j of a marker m that can close a
	// span, or len(s): like Textile, a closer follows non-space text and
	// ends a word.
	close map[byte][]int
}

func closers(s string, m byte) []int {
	next := make([]int, len(s)+1)
	next[len(s)] = len(s)
	for j := len(s) - 1; j >= 0; j-- {
		next[j] = next[j+1]
		if s[j] == m && j > 0 && !isSpace(lastRune(s[:j])) && !wordy(firstRune(s[j+1:]), m) {
			next[j] = j
		}
	}
	return next
}

// inline renders s[lo:hi].
func (l *line) inline(lo, hi int) string {
	s := l.s
	var b strings.Builder
	lit := lo // start of the pending literal run s[lit:i]
	for i := lo; i < hi; {
		var out string
		next := -1
		switch s[i] {
		case '"':
			out, next = l.link(i, hi)
		case '*', '_':
			if j := l.closer(i, hi); j > 0 {
				tag := "strong"
				if s[i] == '_' {
					tag = "em"
				}
				out, next = "<"+tag+">"+l.inline(i+1, j)+"</"+tag+">", j+1
			}
		}
		if next < 0 {
			i++
			continue
		}
		b.WriteString(html.EscapeString(s[lit:i]))
		b.WriteString(out)
		i, lit = next, next
	}
	b.WriteString(html.EscapeString(s[lit:hi]))
	return b.String()
}

// closer returns the index before hi of the marker closing the span that
// s[i] opens, or -1 if s[i] does not open one there. Like Textile, a marker
// opens only at the start of a word (so 2*3*4 and snake_case_name stay
// literal) and the span's text may not start or end with a space.
func (l *line) closer(i, hi int) int {
	s, m := l.s, l.s[i]
	if wordy(lastRune(s[:i]), m) || i+2 >= hi || isSpace(firstRune(s[i+1:])) || s[i+1] == m {
		return -1
	}
	if j := l.close[m][i+2]; j < hi {
		return j
	}
	return -1
}

// link renders the link "text":url starting at s[i], returning the HTML and
// the index after the link, or -1 if there is no link there (or its URL is
// not http, https or mailto).
func (l *line) link(i, hi int) (string, int) {
	s := l.s
	if wordy(lastRune(s[:i]), '"') {
		return "", -1
	}
	k := strings.IndexByte(s[i+1:hi], '"') + i + 1
	if k <= i || strings.TrimSpace(s[i+1:k]) == "" || !strings.HasPrefix(s[k+1:hi], ":") {
		return "", -1
	}
	start := k + 2
	scheme := ""
	for _, sc := range []string{"http://", "https://", "mailto:"} {
		if len(s[start:hi]) >= len(sc) && strings.EqualFold(s[start:start+len(sc)], sc) {
			scheme = sc
		}
	}
	if scheme == "" {
		return "", -1
	}
	end := start
	for end < hi {
		r, n := utf8.DecodeRuneInString(s[end:hi])
		if isSpace(r) {
			break
		}
		end += n
	}
	url := trimURL(s[start:end])
	if len(url) == len(scheme) {
		return "", -1
	}
	href := html.EscapeString(scheme + url[len(scheme):])
	return `<a href="` + href + `">` + l.inline(i+1, k) + "</a>", start + len(url)
}

// trimURL drops trailing sentence punctuation: periods, commas and closing
// parentheses that have no opening one in the URL.
func trimURL(u string) string {
	unopened := strings.Count(u, ")") - strings.Count(u, "(")
	for u != "" {
		switch u[len(u)-1] {
		case '.', ',':
		case ')':
			if unopened <= 0 {
				return u
			}
			unopened--
		default:
			return u
		}
		u = u[:len(u)-1]
	}
	return u
}

// wordy reports whether r continues a word next to marker m: a letter,
// digit or another m. utf8.RuneError stands for "no rune" (start or end).
func wordy(r rune, m byte) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == rune(m))
}

func isSpace(r rune) bool { return unicode.IsSpace(r) }

func firstRune(s string) rune { r, _ := utf8.DecodeRuneInString(s); return r }

func lastRune(s string) rune { r, _ := utf8.DecodeLastRuneInString(s); return r }
