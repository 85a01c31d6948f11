# man3.awk - the section 3 manual of libpmwal, from wal/pmwal.h: one page per
# public function (its comment there is its manual), one per public struct
# and enum (its comment, then its definition with the comment of each
# field), and pmwal(3), the header's opening comment. Run by CMake (man/CMakeLists.txt):
#   awk -v outdir=DIR -v version=V -f man/man3.awk wal/pmwal.h
function esc(s) {
	gsub(/\\/, "\\e", s)
	if (s ~ /^[.']/)
		s = "\\&" s
	return s
}
function page(name, proto, text, kind,   f, n, i, lines) {
	f = outdir "/" name ".3"
	print ".TH " toupper(name) " 3 \"" date "\" \"pmwal " version "\" \"libpmwal manual\"" > f
	print ".SH NAME" > f
	print name " \\- " summary(name, text) > f
	print ".SH SYNOPSIS" > f
	print ".nf" > f
	print ".B #include <pmwal.h>" > f
	print "" > f
	n = split(proto, lines, "\n")
	for (i = 1; i <= n; i++)
		print esc(lines[i]) > f
	print ".fi" > f
	print ".SH DESCRIPTION" > f
	n = split(text, lines, "\n")
	for (i = 1; i <= n; i++)
		print (lines[i] == "" ? ".PP" : esc(lines[i])) > f
	if (kind != "") {
		print ".PP" > f
		print "The comment beside each " kind " in the SYNOPSIS is its manual." > f
	}
	print ".SH SEE ALSO" > f
	print ".BR pmwal (3)," > f
	print ".BR pmwal (1)" > f
	close(f)
	pages++
}
# The first sentence of the comment, for NAME (lexgrog wants one line).
function summary(name, text,   s) {
	s = text
	gsub(/\n/, " ", s)
	sub(/\. .*/, "", s)
	sub(/:.*/, "", s)
	if (length(s) > 70)
		s = substr(s, 1, 67) "..."
	return esc(s == "" ? "libpmwal" : s)
}
BEGIN { incomment = 0; comment = ""; inproto = 0; intype = 0; pages = 0; first = "" }
intype {
	body = body "\n" $0
	if ($0 ~ /^};/) {
		intype = 0
		page(tname, body, comment, tkind)
		comment = ""
	}
	next
}
inproto {
	proto = proto "\n" $0
	if ($0 ~ /;/) {
		inproto = 0
		page(pname, proto, comment)
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
# A public struct or enum: its page is its definition. (enum pmwal_error is
# written by a macro, PMWAL_ERRORS: its page shows the list.)
/^(struct|enum) pmwal_[a-z0-9_]+ \{/ {
	tname = $2
	tkind = $1 == "struct" ? "field" : "value"
	body = $0
	intype = 1
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
	if ($0 ~ /;/)
		page(pname, proto, comment)
	else
		inproto = 1
	next
}
/^[ \t]*$/ { next }
{ comment = "" } # anything else between a comment and a prototype
END {
	f = outdir "/pmwal.3"
	print ".TH PMWAL 3 \"" date "\" \"pmwal " version "\" \"libpmwal manual\"" > f
	print ".SH NAME" > f
	print "pmwal \\- a write-ahead log for NVMe flash, files, block devices and persistent memory" > f
	print ".SH SYNOPSIS" > f
	print ".nf" > f
	print ".B #include <pmwal.h>" > f
	print ".PP" > f
	print "Link with \\fI\\-lpmwal\\fP, or \\fIpkg\\-config \\-\\-libs pmwal\\fP." > f
	print ".fi" > f
	print ".SH DESCRIPTION" > f
	n = split(first, lines, "\n")
	for (i = 1; i <= n; i++)
		print (lines[i] == "" ? ".PP" : esc(lines[i])) > f
	print ".PP" > f
	print "Each function has its own page: see the list of pmwal_*(3) pages." > f
	print ".SH SEE ALSO" > f
	print ".BR pmwal (1)" > f
	close(f)
	if (pages < 30) {
		print "man3.awk: only " pages " functions found in the header" > "/dev/stderr"
		exit 1
	}
}
