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
	for line := range strings.SplitSeq(body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			flush()
			continue
		}
		lines = append(lines, inline(line))
	}
	flush()
	return strings.Join(paras, "\n")
}

// inline renders one line: links and strong/em spans; the rest is escaped.
func inline(s string) string {
	var b strings.Builder
	lit := 0 // start of the pending literal run s[lit:i]
	for i := 0; i < len(s); {
		var out string
		next := -1
		switch s[i] {
		case '"':
			out, next = link(s, i)
		case '*', '_':
			if j := closer(s, i); j > 0 {
				tag := "strong"
				if s[i] == '_' {
					tag = "em"
				}
				out, next = "<"+tag+">"+inline(s[i+1:j])+"</"+tag+">", j+1
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
	b.WriteString(html.EscapeString(s[lit:]))
	return b.String()
}

// closer returns the index of the marker closing the span that s[i] opens,
// or -1 if s[i] does not open one. Like Textile, a marker opens only at the
// start of a word (so 2*3*4 and snake_case_name stay literal), the span's
// text may not start or end with a space, and a closer must end a word.
func closer(s string, i int) int {
	m := s[i]
	if wordy(lastRune(s[:i]), m) || i+1 >= len(s) || isSpace(firstRune(s[i+1:])) || s[i+1] == m {
		return -1
	}
	for j := i + 2; j < len(s); j++ {
		if s[j] == m && !isSpace(lastRune(s[:j])) && !wordy(firstRune(s[j+1:]), m) {
			return j
		}
	}
	return -1
}

// link renders the link "text":url starting at s[i], returning the HTML and
// the index after the link, or -1 if there is no link there (or its URL is
// not http, https or mailto).
func link(s string, i int) (string, int) {
	if wordy(lastRune(s[:i]), '"') {
		return "", -1
	}
	k := strings.IndexByte(s[i+1:], '"') + i + 1
	if k <= i || strings.TrimSpace(s[i+1:k]) == "" || !strings.HasPrefix(s[k+1:], ":") {
		return "", -1
	}
	start := k + 2
	end := start
	for end < len(s) {
		r, n := utf8.DecodeRuneInString(s[end:])
		if isSpace(r) {
			break
		}
		end += n
	}
	url := trimURL(s[start:end])
	href := ""
	for _, scheme := range []string{"http://", "https://", "mailto:"} {
		if len(url) > len(scheme) && strings.EqualFold(url[:len(scheme)], scheme) {
			href = scheme + url[len(scheme):]
		}
	}
	if href == "" {
		return "", -1
	}
	return `<a href="` + html.EscapeString(href) + `">` + inline(s[i+1:k]) + "</a>", start + len(url)
}

// trimURL drops trailing sentence punctuation: periods, commas and closing
// parentheses that have no opening one in the URL.
func trimURL(u string) string {
	for u != "" {
		switch c := u[len(u)-1]; {
		case c == '.' || c == ',':
		case c == ')' && strings.Count(u, "(") < strings.Count(u, ")"):
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
