# man3.awk - the section 3 manual of libpmwal, from wal/pmwal.h: one page per
# public function (its comment there is its manual), one per public struct,
# enum, callback type and opaque handle (its comment, then each field's or
# value's comment), and pmwal(3), the header's opening comment with the list
# of every page. Run by CMake (man/CMakeLists.txt):
#   awk -v outdir=DIR -v version=V -v date=D -f man/man3.awk wal/pmwal.h
#
# What a comment in pmwal.h may hold, so that the header stays a header:
#  - its first sentence is the page's NAME line, whole (never cut: keep it
#    short and end it with a period);
#  - paragraphs, separated by empty lines; "  - item" lists; lines indented
#    by a tab or by three spaces or more are shown as written (code, tables);
#  - sections, each a line beginning with its label: "Returns:" (RETURN
#    VALUE), "Errors:" (ERRORS: lines "  CODE  when", continued indented
#    deeper), "Notes:", "Example:" (shown as written), "See also:" (pages,
#    "name(3), ...");
#  - in the opening comment, a short line "Title:" after an empty line
#    starts a subsection of pmwal(3).
# tests/man_check.sh checks the pages these make.

# Roff text of a line of comment: backslashes escaped, a leading dot
# guarded, @param in italics, function() in bold.
function esc(s) {
	gsub(/\\/, "\\e", s)
	if (s ~ /^[.']/)
		s = "\\&" s
	return s
}
function fmt(s,   out, t) {
	s = esc(s)
	out = ""
	while (match(s, /@[A-Za-z_][A-Za-z0-9_]*(->[a-z_]+)?|[a-z_][a-z0-9_]*\(\)/)) {
		t = substr(s, RSTART, RLENGTH)
		out = out substr(s, 1, RSTART - 1)
		if (t ~ /^@/)
			out = out "\\fI" substr(t, 2) "\\fP"
		else
			out = out "\\fB" substr(t, 1, length(t) - 2) "\\fP()"
		s = substr(s, RSTART + RLENGTH)
	}
	return out s
}
function plain(s) {
	gsub(/@/, "", s)
	return esc(s)
}
# The first sentence of a comment: up to the first period that ends a
# sentence (followed by a space or the end of its paragraph) outside
# parentheses. Whole, never cut: man_check.sh judges its length.
function summary(text,   s, i, c, depth, n) {
	s = text
	sub(/\n\n.*/, "", s)
	gsub(/\n/, " ", s)
	depth = 0
	n = length(s)
	for (i = 1; i <= n; i++) {
		c = substr(s, i, 1)
		if (c == "(")
			depth++
		else if (c == ")")
			depth--
		else if (c == "." && depth == 0 && (i == n || substr(s, i + 1, 1) == " ") &&
			 substr(s, i - 1, 1) != ".")
			return plain(substr(s, 1, i - 1))
	}
	return plain(s)
}
function emit(f, s) { print s > f }
# Tabs to spaces at 8-column stops, as the header shows them.
function detab(s,   out, i, c) {
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\t") {
			do
				out = out " "
			while (length(out) % 8)
		} else
			out = out c
	}
	return out
}
# Body text of a section: paragraphs, "  - " list items (their lines
# continued indented), lines indented by a tab shown as written.
function body(f, text, verbatim_all,   n, i, lines, l, inverb) {
	n = split(text, lines, "\n")
	inverb = 0
	for (i = 1; i <= n; i++) {
		l = lines[i]
		if (verbatim_all || l ~ /^\t/) {
			if (!inverb) {
				emit(f, ".PP")
				emit(f, ".nf")
				emit(f, ".RS 4")
				inverb = 1
			}
			if (l == "") {
				emit(f, "")
				continue
			}
			sub(/^\t/, "", l)
			l = detab(l)
			emit(f, "\\&" esc(l))
			continue
		}
		if (inverb) {
			emit(f, ".RE")
			emit(f, ".fi")
			inverb = 0
			if (l != "")
				emit(f, ".PP")
		}
		if (l == "") {
			if (i > 1 && i < n)
				emit(f, ".PP")
			continue
		}
		if (l ~ /^ *- /) {
			sub(/^ *- /, "", l)
			emit(f, ".IP \\(bu 2")
		}
		sub(/^ +/, "", l)
		emit(f, fmt(l))
	}
	if (inverb) {
		emit(f, ".RE")
		emit(f, ".fi")
	}
}
# ERRORS: lines "  CODE  when it is returned" (two spaces in), continued on
# lines indented deeper; lines not indented are prose around the list.
function errors(f, text,   n, i, lines, l, code) {
	n = split(text, lines, "\n")
	for (i = 1; i <= n; i++) {
		l = lines[i]
		if (l ~ /^  [^ ]/) {
			sub(/^ +/, "", l)
			code = l
			sub(/ .*/, "", code)
			sub(/^[^ ]+ */, "", l)
			l = cap(l)
			gsub(/-/, "\\-", code)
			emit(f, ".TP")
			emit(f, ".B " code)
		} else if (l !~ /^   /) {
			if (l != "")
				emit(f, ".PP")
		}
		sub(/^ +/, "", l)
		if (l != "")
			emit(f, fmt(l))
	}
}
function seealso(f, list, self,   n, i, items, it, nm, sec, out, k) {
	n = split(list, items, /,[ \n]*/)
	k = 0
	for (i = 1; i <= n; i++) {
		it = items[i]
		gsub(/^[ \n]+|[ .\n]+$/, "", it)
		if (it == "")
			continue
		nm = it
		sub(/\(.*/, "", nm)
		sec = it
		sub(/^[^(]*\(/, "", sec)
		sub(/\).*/, "", sec)
		if (nm == self && sec == "3")
			continue
		out[++k] = ".BR " nm " (" sec ")"
	}
	if (self != "pmwal")
		out[++k] = ".BR pmwal (3)"
	for (i = 1; i <= k; i++)
		emit(f, out[i] (i < k ? "," : ""))
}
# Split a comment into its sections: sect["desc"], sect["Returns"], ...
function sections(text, sect,   n, i, lines, l, cur, lab) {
	split("", sect)
	cur = "desc"
	n = split(text, lines, "\n")
	for (i = 1; i <= n; i++) {
		l = lines[i]
		if (match(l, /^(Returns|Errors|Notes|Example|See also):/)) {
			lab = substr(l, 1, RLENGTH - 1)
			cur = lab
			l = substr(l, RLENGTH + 1)
			sub(/^ +/, "", l)
			if (l == "")
				continue
		}
		sect[cur] = (cur in sect) ? sect[cur] "\n" l : l
	}
	for (lab in sect) {
		sub(/^\n+/, "", sect[lab])
		sub(/\n+$/, "", sect[lab])
		if (lab == "Returns" || lab == "Notes")
			sect[lab] = cap(sect[lab])
	}
}
# A sentence's first letter up, where its first word is a plain word (not
# an identifier such as io_uring or enum, not a path).
function cap(s) {
	if (s !~ /^[a-z]+([ ,:;.]|$)/ || s ~ /^enum /)
		return s
	return toupper(substr(s, 1, 1)) substr(s, 2)
}
# DESCRIPTION: the comment less its first paragraph where that is the NAME
# line's sentence alone (and more follows).
function description(text,   p) {
	p = text
	sub(/\n\n.*/, "", p)
	if (p != text && p ~ /\.$/ && index(p, ". ") == 0)
		return substr(text, length(p) + 3)
	return text
}
function header(f, name) {
	emit(f, ".TH " toupper(name) " 3 \"" date "\" \"pmwal " version "\" \"libpmwal manual\"")
}
function synopsis(f, proto,   n, i, lines, l) {
	emit(f, ".SH SYNOPSIS")
	emit(f, ".nf")
	emit(f, ".B #include <pmwal.h>")
	emit(f, ".PP")
	n = split(proto, lines, "\n")
	for (i = 1; i <= n; i++) {
		l = lines[i]
		l = detab(l)
		emit(f, (l == "" ? "" : "\\&" esc(l)))
	}
	emit(f, ".fi")
	emit(f, ".PP")
	emit(f, "Link with \\fI\\-lpmwal\\fP (\\fIpkg\\-config \\-\\-libs pmwal\\fP;")
	emit(f, "CMake: \\fIfind_package(pmwal)\\fP, target \\fIpmwal::pmwal\\fP).")
}
# One page. kind: "function", or "type" (struct, enum, callback, handle).
# Pages are written at the end: a struct that shares its name with a
# function (struct pmwal_sim_fault, pmwal_sim_fault()) is shown on the
# function's page.
function page(name, proto, text, kind, fields) {
	if (text == "")
		undocumented = undocumented " " name
	if (name in pidx) {
		if (kind == "function") {
			Pproto[pidx[name]] = Pproto[pidx[name]] "\n\n" proto
			Ptext[pidx[name]] = text
			Pkind[pidx[name]] = kind
		} else {
			Pproto[pidx[name]] = proto "\n\n" Pproto[pidx[name]]
			Pfields[pidx[name]] = fields
		}
		return
	}
	pages++
	pidx[name] = pages
	order[pages] = name
	Pproto[pages] = proto
	Ptext[pages] = text
	Pkind[pages] = kind
	Pfields[pages] = fields
}
function write_page(i,   f, sect, name, proto) {
	name = order[i]
	proto = Pproto[i]
	sections(Ptext[i], sect)
	summ[name] = summary(sect["desc"])
	f = outdir "/" name ".3"
	header(f, name)
	emit(f, ".SH NAME")
	emit(f, name " \\- " summ[name])
	synopsis(f, proto)
	emit(f, ".SH DESCRIPTION")
	body(f, description(sect["desc"]))
	if (Pfields[i] != "") {
		emit(f, ".SH " (proto ~ /^enum/ ? "VALUES" : "FIELDS"))
		emit(f, Pfields[i])
	}
	if ("Returns" in sect) {
		emit(f, ".SH RETURN VALUE")
		body(f, sect["Returns"])
	}
	if ("Errors" in sect) {
		emit(f, ".SH ERRORS")
		errors(f, sect["Errors"])
	}
	if ("Notes" in sect) {
		emit(f, ".SH NOTES")
		body(f, sect["Notes"])
	}
	if ("Example" in sect) {
		emit(f, ".SH EXAMPLES")
		body(f, sect["Example"], 1)
	}
	emit(f, ".SH SEE ALSO")
	seealso(f, sect["See also"], name)
	close(f)
}
# A field's or value's entry: its name, then its comment(s).
function field(decl, doc,   nm, t) {
	t = decl
	sub(/\/\*.*/, "", t)
	sub(/^[ \t]+/, "", t)
	sub(/[ \t]+$/, "", t)
	if (t == "" || t ~ /^#/)
		return
	if (intype_enum) {
		nm = t
		sub(/[ =,].*/, "", nm)
	} else {
		nm = t
		sub(/;.*/, "", nm)
		sub(/\[.*/, "", nm)
		sub(/.*[ *]/, "", nm)
	}
	if (doc == "")
		doc = "(undocumented)"
	fields = fields ".TP\n" (intype_enum ? ".B " : ".I ") nm "\n" doc "\n"
}
function fielddoc(text,   n, i, lines, out, l, inverb) {
	n = split(text, lines, "\n")
	out = ""
	inverb = 0
	for (i = 1; i <= n; i++) {
		l = lines[i]
		if (l ~ /^[ \t]*$/)
			l = ""
		if (l ~ /^  / || l ~ /^\t/) {
			if (!inverb)
				out = out (out == "" ? "" : "\n") ".nf"
			inverb = 1
			sub(/^  /, "", l)
			l = detab(l)
			out = out "\n\\&" esc(l)
			continue
		}
		if (inverb) {
			out = out "\n.fi"
			inverb = 0
		}
		sub(/^ +/, "", l)
		if (l == "") {
			if (out != "" && i < n)
				out = out "\n.IP"
			continue
		}
		out = out (out == "" ? "" : "\n") fmt(out == "" ? cap(l) : l)
	}
	if (inverb)
		out = out "\n.fi"
	return out
}
BEGIN {
	incomment = 0; comment = ""; inproto = 0; intype = 0; pages = 0; first = ""
	consts = ""; nerr = 0; undocumented = ""
}
# The error table: the VALUES of enum pmwal_error (its comment is the
# enum's, above the table).
/^#define PMWAL_ERRORS\(/ { next }
/^[ \t]*X\(PMWAL_E[A-Z]+, *-[0-9]+, *".*"\)/ {
	l = $0
	sub(/^[ \t]*X\(/, "", l)
	nm = l; sub(/,.*/, "", nm)
	v = l; sub(/^[^,]*, */, "", v); sub(/,.*/, "", v)
	t = l; sub(/^[^"]*"/, "", t); sub(/"\).*/, "", t)
	nerr++
	errnames[nerr] = nm
	errvals[nerr] = v
	errtext[nerr] = t
	next
}
intype {
	# Field comments: a block before a field, or one after it on its line.
	if (fcomment_open) {
		l = $0
		done = l ~ /\*\//
		sub(/ *\*\/.*$/, "", l)
		sub(/^[ \t]*\* ?/, "", l)
		fdoc = fdoc "\n" l
		if (done)
			fcomment_open = 0
		next
	}
	if ($0 ~ /^};/) {
		intype = 0
		body_text = body_text "\n};"
		if (tname == "pmwal_error") {
			body_text = "enum pmwal_error {"
			fields = ""
			for (i = 1; i <= nerr; i++) {
				body_text = body_text "\n\t" errnames[i] " = " errvals[i] ","
				fields = fields ".TP\n.BR " errnames[i] " \" (" errvals[i] ")\"\n" \
					fmt(errtext[i]) ".\n"
			}
			body_text = body_text "\n};"
		}
		page(tname, body_text, comment, "type", fields)
		comment = ""
		next
	}
	if ($0 ~ /^[ \t]*\/\*/) {
		l = $0
		sub(/^[ \t]*\/\* ?/, "", l)
		if (l ~ /\*\//) {
			sub(/ *\*\/.*$/, "", l)
			fdoc = l
		} else {
			fdoc = l
			fcomment_open = 1
		}
		next
	}
	if ($0 ~ /^#/)
		next
	decl = $0
	sub(/[ \t]*\/\*.*/, "", decl)
	gsub(/[ \t]+/, " ", decl)
	sub(/^ /, "", decl)
	body_text = body_text "\n\t" decl
	trail = ""
	if ($0 ~ /\/\*/) {
		trail = $0
		sub(/^[^\/]*\/\* ?/, "", trail)
		sub(/ *\*\/.*$/, "", trail)
	}
	doc = fdoc
	if (trail != "")
		doc = doc (doc == "" ? "" : "\n") trail
	field(decl, fielddoc(doc))
	fdoc = ""
	next
}
inproto {
	proto = proto "\n" $0
	if ($0 ~ /;/) {
		inproto = 0
		page(pname, proto, comment, "function")
		comment = ""
	}
	next
}
/^\/\*/ {
	incomment = 1
	comment = ""
	line = $0
	sub(/^\/\* ?/, "", line)
	if (line ~ /\*\/[ \t]*$/) {
		sub(/ *\*\/[ \t]*$/, "", line)
		incomment = 0
	}
	if (line != "")
		comment = line
	next
}
incomment {
	line = $0
	if (line ~ /\*\//) {
		incomment = 0
		sub(/ *\*\/.*$/, "", line)
		sub(/^ *\* ?/, "", line)
		if (line != "")
			comment = comment (comment == "" ? "" : "\n") line
		if (first == "")
			first = comment
		next
	}
	sub(/^ *\* ?/, "", line)
	sub(/^ *\*$/, "", line)
	comment = comment (comment == "" ? "" : "\n") line
	next
}
# Constants: shown in pmwal(3) with their comment.
/^#define PMWAL_[A-Z_]+ [0-9]/ {
	consts = consts ".TP\n.B " $2 " (" $3 ")\n" fielddoc(comment) "\n"
	next
}
# A public struct or enum: its page is its definition and each member's
# comment. (enum pmwal_error is written by a macro, PMWAL_ERRORS: its page
# shows the expanded list.)
/^(struct|enum) pmwal_[a-z0-9_]+ \{/ {
	tname = $2
	intype_enum = ($1 == "enum")
	body_text = $0
	fields = ""
	fdoc = ""
	fcomment_open = 0
	intype = 1
	next
}
# An opaque handle: a page of its own where it has a comment (struct pmwal
# itself is pmwal(3)).
/^struct pmwal_[a-z0-9_]+;/ {
	h = $2
	sub(/;.*/, "", h)
	page(h, $0, comment, "type", "")
	comment = ""
	next
}
/^[a-z].*[ *(]pmwal_[a-z0-9_]+\(/ || /^typedef .*\(\*pmwal_[a-z_]+\)/ {
	pname = $0
	sub(/\(.*/, "", pname)
	if ($0 ~ /^typedef/) {
		pname = $0
		sub(/^[^(]*\(\*/, "", pname)
		sub(/\).*/, "", pname)
	}
	sub(/.*[ *]/, "", pname)
	proto = $0
	if ($0 ~ /;/) {
		page(pname, proto, comment, "function")
		comment = ""
	} else
		inproto = 1
	next
}
/^[ \t]*$/ { next }
{ comment = "" } # anything else between a comment and a prototype
# pmwal(3): the opening comment, the constants and the list of pages.
function overview(f,   n, i, lines, l, prev, chunk, s, sorted, j, t) {
	header(f, "pmwal")
	sections(first, s)
	emit(f, ".SH NAME")
	emit(f, "pmwal \\- " summary(s["desc"]))
	emit(f, ".SH SYNOPSIS")
	emit(f, ".nf")
	emit(f, ".B #include <pmwal.h>")
	emit(f, ".fi")
	emit(f, ".PP")
	emit(f, "Link with \\fI\\-lpmwal\\fP (\\fIpkg\\-config \\-\\-libs pmwal\\fP;")
	emit(f, "CMake: \\fIfind_package(pmwal)\\fP, target \\fIpmwal::pmwal\\fP).")
	emit(f, ".SH DESCRIPTION")
	# Subsections: a short "Title:" line after an empty line.
	n = split(description(s["desc"]), lines, "\n")
	chunk = ""
	prev = ""
	for (i = 1; i <= n; i++) {
		l = lines[i]
		if (prev == "" && l ~ /^[A-Z][A-Za-z ,-]*:$/ && length(l) < 40) {
			body(f, chunk)
			chunk = ""
			sub(/:$/, "", l)
			emit(f, ".SS " l)
		} else
			chunk = chunk (chunk == "" ? "" : "\n") l
		prev = l
	}
	body(f, chunk)
	if (consts != "") {
		emit(f, ".SS Constants")
		emit(f, consts)
	}
	emit(f, ".SS Pages")
	# The list of pages, sorted by name (insertion sort: about 50).
	for (i = 1; i <= pages; i++)
		sorted[i] = order[i]
	for (i = 2; i <= pages; i++)
		for (j = i; j > 1 && sorted[j - 1] > sorted[j]; j--) {
			t = sorted[j]; sorted[j] = sorted[j - 1]; sorted[j - 1] = t
		}
	for (i = 1; i <= pages; i++) {
		emit(f, ".TP")
		emit(f, ".BR " sorted[i] " (3)")
		emit(f, summ[sorted[i]])
	}
	if ("Example" in s) {
		emit(f, ".SH EXAMPLES")
		body(f, s["Example"], 1)
	}
	emit(f, ".SH SEE ALSO")
	seealso(f, s["See also"], "pmwal")
	close(f)
}
END {
	for (i = 1; i <= pages; i++)
		write_page(i)
	overview(outdir "/pmwal.3")
	if (pages < 30) {
		print "man3.awk: only " pages " pages made from the header" > "/dev/stderr"
		exit 1
	}
	if (undocumented != "") {
		print "man3.awk: no comment in pmwal.h for:" undocumented > "/dev/stderr"
		exit 1
	}
}
