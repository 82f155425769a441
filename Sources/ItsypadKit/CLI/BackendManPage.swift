/// itsypad-backend(5): written by hand, since the command table says nothing
/// about the backend's files. It lives here so that `itsypad install` can write
/// it; man/itsypad-backend.5 is a copy, checked by ManPageTests.
extension ManPage {
    public static let backend = (name: "itsypad-backend.5", text: #"""
.\" Hand-written in Sources/ItsypadKit/CLI/BackendManPage.swift (man/ holds a copy); keep in step with Sources/ItsypadKit/Backend and Sources/ItsypadKit/Sync/RecordMapping.swift.
.TH ITSYPAD\-BACKEND 5 2026-11-21 "itsypad 0.1.0" "File Formats"
.SH "NAME"
itsypad\-backend \- the directory itsypad syncs through
.SH "SYNOPSIS"
.nf
\fIbackend\fR/zone.json
\fIbackend\fR/state.json
\fIbackend\fR/lock
\fIbackend\fR/records/\fIrecordType\fR/\fIrecordName\fR.json
\fIbackend\fR/assets/\fIsha256\fR
\fIbackend\fR/journal/\fIfirst\-seq\fR.log
.fi
.SH "DESCRIPTION"
A sync backend is a directory that every device syncing with it can reach:
a local path, an NFS or SMB mount, a USB disk.
Each device names it in its \fBsync.backend\fR setting.
It plays the part of a CloudKit private database holding a single record zone:
records are saved and deleted in atomic batches, each version carries a change tag,
and a device asks for the changes made since its last change token.
.PP
Every file is JSON written with sorted keys, except the assets, which are raw bytes.
Names starting with a dot are temporary files: readers ignore them,
and compaction removes those more than an hour old.
This page describes format 1.
.SH "FILES"
.TP
.I zone.json
The zone: an object with \fBformat\fR (the format version, 1),
\fBzoneID\fR (random, without \(lq:\(rq) and \fBcreated\fR
(milliseconds since 1970).
A device that finds a different \fBzoneID\fR than the one it synced with
knows the backend was replaced, and sends everything again.
A device refuses a format newer than it understands and changes nothing.
.TP
.I state.json
How far the journal has been applied and compacted:
an object with \fBappliedSeq\fR (every change up to this sequence number
is reflected in \fIrecords/\fR) and \fBcompactedThrough\fR
(journal changes up to this number may have been dropped).
A missing file means both are 0.
.TP
.I lock
The writers' lock: a writer holds an exclusive
.BR flock (2)
on it for the whole batch.
Another writer polls for it for a bounded time, then gives up;
the itsypad command then exits 75 (try again later).
Readers never take it.
.TP
.IR records/ recordType / recordName .json
The current version of every record, as of \fBappliedSeq\fR.
Record types and names are 1 to 250 characters of
\fBA\-Z a\-z 0\-9 . _ \-\fR and do not start with a dot.
A deleted record has no file.
.TP
.IR assets/ sha256
Content-addressed blobs of up to 50 MiB, named by the lowercase hexadecimal
SHA-256 of their content.
Tab content too large for a record (over 900,000 bytes) is stored here and
referenced from the record.
An asset is written before the batch that references it;
compaction removes assets no record references once they are an hour old.
.TP
.IR journal/ first\-seq .log
The journal: an append-only write-ahead log, in segments named by the
sequence number of their first change (16 digits).
Writers start a new segment once the last one reaches 4 MiB.
.SH "RECORDS"
A record file holds one record in the record-dictionary form of
CloudKit Web Services:
.RS 4
.EX
{"created":{"deviceID":"\fIdevice\fR","timestamp":1763769600000},
 "fields":{"pinned":{"type":"INT64","value":0},
           "text":{"type":"STRING","value":"hello"},
           "timestamp":{"type":"TIMESTAMP","value":1763769600000}},
 "modified":{"deviceID":"\fIdevice\fR","timestamp":1763769600000},
 "recordChangeTag":"42",
 "recordName":"3f2a9c1e\-0d4b\-4c55\-9a0e\-5b7f2d8e6a11",
 "recordType":"ClipboardEntry"}
.EE
.RE
.PP
\fBcreated\fR is set by the first save and kept;
\fBmodified\fR is set by every save.
Both hold the time in milliseconds since 1970 and the writing device's id.
Field names start with a letter and hold letters, digits and underscores.
Each field is an object with a \fBvalue\fR and a \fBtype\fR:
.TP
.B STRING
A string.
.TP
.B INT64
An integer; flags are stored as 0 or 1.
.TP
.B DOUBLE
A finite number.
.TP
.B TIMESTAMP
Milliseconds since 1970.
.TP
.B STRING_LIST
An array of strings.
.TP
.B ASSETID
An asset reference: an object with \fBfileChecksum\fR
(the asset's file name) and \fBsize\fR (in bytes).
.PP
A record is at most 1 MiB encoded, assets not counted.
One batch holds at most 400 saves and deletes and 2 MiB of records.
itsypad writes three record types:
.TP
.B ScratchTab
A tab; \fBrecordName\fR is the tab's id.
Fields: \fBname\fR, \fBlanguage\fR and \fBdeviceName\fR (STRING);
\fBnameLocked\fR and \fBlanguageLocked\fR (INT64, 0 or 1);
\fBlastModified\fR (TIMESTAMP);
\fBclock\fR (STRING, a hybrid logical clock
\fImilliseconds\fR.\fIcounter\fR.\fIdevice\fR);
and either \fBcontent\fR (STRING) or, for large content,
\fBcontentAsset\fR (ASSETID).
File-backed tabs are never synced.
.TP
.B ClipboardEntry
A clipboard entry; \fBrecordName\fR is the entry's id.
Fields: \fBtext\fR (STRING), \fBtimestamp\fR (TIMESTAMP) and
\fBpinned\fR (INT64, 0 or 1).
Entries kept local are never written.
.TP
.B Setting
One synced setting; \fBrecordName\fR is its key,
e.g.\& \fBclipboard.maxEntries\fR.
Fields: \fBvalue\fR (STRING, the value as JSON; absent when the setting was unset)
and \fBclock\fR (STRING, as for tabs).
Device settings are never written.
.SH "JOURNAL"
Each line of a segment is one committed batch, a JSON object with
\fBseq\fR (the first change's sequence number, always the first key, so that
readers can skip lines without decoding them), \fBdevice\fR,
\fBtime\fR (milliseconds since 1970) and \fBchanges\fR.
Each change has \fBseq\fR (consecutive within the batch and across batches),
\fBop\fR (\fBsave\fR or \fBdelete\fR), \fBrecordType\fR, \fBrecordName\fR,
\fBtag\fR (for a save the new version's change tag,
for a delete the tag of the version it removed)
and, for a save, \fBrecord\fR: the whole record as stored in \fIrecords/\fR.
.PP
A last line without a newline, or that is not valid JSON, was never committed:
the next writer cuts it off.
.SH "CHANGE TAGS AND TOKENS"
A version's change tag is the sequence number, in decimal, of the journal
change that wrote it.
A save that carries a tag succeeds only when it is the record's current tag;
a save without one only when the record does not exist.
Otherwise that record fails with a conflict carrying the current version,
and, as a zone is atomic, the whole batch fails and nothing is written.
A delete may carry the tag it expects in the same way;
deleting a record that does not exist succeeds and writes nothing.
.PP
A change token is opaque to devices.
Format 1 writes \fB1:\fIzoneID\fB:\fIseq\fR, meaning every change up to
\fIseq\fR was seen, optionally followed by
\fB:at:\fIsegment\fB:\fIoffset\fR (where in the journal to resume reading) or by
\fB:after:\fIrecordType\fB/\fIrecordName\fR (part-way through a full fetch).
Changes since a token are read from the journal, so their cost follows the
number of changes, not the number of records.
A token of another zone means the backend was replaced.
.SH "COMPACTION"
Once the journal is larger than 1 MiB and larger than the records,
a writer compacts it: it applies every committed batch to \fIrecords/\fR,
sets \fBcompactedThrough\fR to the latest sequence number in \fIstate.json\fR,
creates the next, empty segment and then removes the old ones.
It also removes unreferenced assets and temporary files older than an hour.
.PP
A token older than \fBcompactedThrough\fR has expired:
the device then fetches every current record again (a full fetch,
paged in record order) and resumes with incremental fetches from there.
.SH "ATOMICITY"
A writer, holding the lock, first cuts off an uncommitted last line and
applies any committed batch that \fIrecords/\fR does not reflect yet.
It then appends the batch as one line with a single
.BR write (2)
and
.BR fsync (2):
that is the commit.
Only then does it update \fIrecords/\fR and \fIstate.json\fR,
each file replaced atomically (a temporary file in the same directory,
fsync, rename, fsync of the directory).
After a crash past the commit, the next writer rolls the batch forward.
.PP
Readers never lock: they read \fIstate.json\fR, then \fIrecords/\fR,
then the journal lines after \fBappliedSeq\fR, and overlay those on the records.
When a segment disappears under them because a compaction ran,
they read \fIstate.json\fR again and retry.
.SH "SEE ALSO"
.BR itsypad (1),
.BR itsypad\-settings (1),
.BR flock (2)

"""#)
}
