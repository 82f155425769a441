import ItsypadModel
import ItsypadSupport
import ItsypadSync

/// itsypad-backend(5): written by hand, since the command table says nothing
/// about the backend's files. It lives here so that `itsypad install` can write
/// it; man/itsypad-backend.5 is a copy, checked by ManPageTests.
extension ManPage {
    public static let backend = (
        name: "itsypad-backend.5",
        text: #"""
        .\" Hand-written in Sources/ItsypadKit/CLI/BackendManPage.swift (man/ holds a copy); keep in step with Sources/ItsypadKit/Backend and the record field types in Sources/ItsypadKit/Sync/RecordTypes.
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
        .PP
        Format 1, described first, needs a folder that every device sees the same
        at every moment, with a working
        .BR flock (2).
        A folder kept in step by a replicating service (Syncthing, Dropbox, Nextcloud,
        iCloud Drive, OneDrive) is not such a folder: each machine has its own copy and
        files are copied between copies in any order.
        Format 2, described in
        .B FORMAT 2
        below, works in both. Format 4 is format 2 with its record files in subfolders
        (see \fBRecord folders\fR): this version of itsypad creates format 4,
        keeps a format 2 backend as it is, and converts an unencrypted format 1 backend
        it finds to format 4 (see \fBMigration\fR).
        .SH "FILES"
        .TP
        .I zone.json
        The zone: an object with \fBformat\fR (the format version, 1; 3 for an encrypted backend, see ENCRYPTION),
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
        The current version of every record, as of \fBappliedSeq\fR
        (see NAMES AND LIMITS for the names).
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
        itsypad writes four record types:
        .TP
        .B ScratchTab
        A tab; \fBrecordName\fR is the tab's id.
        Fields: \fBname\fR, \fBlanguage\fR and \fBdeviceName\fR (STRING);
        \fBnameLocked\fR and \fBlanguageLocked\fR (INT64, 0 or 1);
        \fBlastModified\fR (TIMESTAMP);
        \fBclock\fR (STRING, a hybrid logical clock
        \fImilliseconds\fR.\fIcounter\fR.\fIdevice\fR);
        \fBhistory\fR (STRING_LIST, see \fBHISTORIES\fR);
        and either \fBcontent\fR (STRING) or, for large content,
        \fBcontentAsset\fR (ASSETID).
        File-backed tabs are never synced.
        .TP
        .B ClipboardEntry
        A clipboard entry; \fBrecordName\fR is the entry's id.
        Fields: \fBtext\fR (STRING), \fBtimestamp\fR (TIMESTAMP),
        \fBpinned\fR (INT64, 0 or 1) and
        \fBhistory\fR (STRING_LIST, the pin changes the version includes).
        Entries kept local are never written.
        .TP
        .B Setting
        One synced setting; \fBrecordName\fR is its key,
        e.g.\& \fBclipboard.maxEntries\fR.
        Fields: \fBvalue\fR (STRING, the value as JSON; absent when the setting was unset)
        and \fBclock\fR (STRING, as for tabs).
        Device settings are never written.
        .TP
        .B Tombstone
        What a deletion had seen; \fBrecordName\fR is
        \fIrecordType\fB.\fIrecordName\fR of the deleted record.
        Fields: \fBdeletedType\fR and \fBdeletedName\fR (STRING, the deleted record)
        and \fBhistory\fR (STRING_LIST, the edits the deleted version included).
        .SH "HISTORIES"
        A \fBhistory\fR lists, for each device that edited an item, the clock
        of its latest edit the version includes (one clock per device).
        A version whose history includes another's has seen all of that version's
        edits: a device adopts it without merging, and a version sent back by a
        sync that was killed after its batch committed is recognised as the
        device's own.
        Only versions that each include an edit the other lacks are concurrent:
        tab contents then merge three ways (name and language follow the version
        with the later clock, and a merge is stamped from the two clocks, never
        the merger's), and pins merge as logical OR, so an unpin made after seeing
        the pin sticks.
        A record without \fBhistory\fR (written by an earlier itsypad) counts as
        its own edit, \fBclock\fR for a tab and none for a clipboard entry.
        .SH "DELETIONS"
        A tab or clipboard entry removed on purpose (\fBtab rm\fR, \fBclip rm\fR,
        \fBclip clear\fR) goes in one batch that deletes the record and saves its
        \fBTombstone\fR.
        A device holding unsent edits of a record it finds deleted keeps them
        (an edit beats a deletion) unless the tombstone's history includes them:
        then the deleter had seen them, and the deletion stands.
        Tombstones stay when the journal is compacted, so a device that
        must fetch everything again still learns what each deletion had seen;
        \fBitsypad sync compact\fR removes those older than 90 days.
        A deletion without a tombstone (an entry evicted past
        \fBclipboard.maxEntries\fR or pruned, which any device would remove again,
        or one written by an earlier itsypad) says nothing of what it had seen:
        unsent edits of a tab then win over it, and a clipboard entry goes whatever
        waits (a pin never brings an entry back).
        Devices that do not know tombstones see a plain deletion.
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
        A last line without a newline, or that is not a valid batch, was never committed:
        the next writer cuts it off.
        A line before it that is not a valid batch is malformed (see MALFORMED ENTRIES).
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
        .SH "NAMES AND LIMITS"
        Every name below is checked against its grammar before it is used,
        and only a name that passes becomes part of a path;
        paths stay inside the backend directory.
        .TP
        .I recordType
        1 to 255 characters of \fBA\-Z a\-z 0\-9 . _ \-\fR, not starting with a dot;
        a folder of \fIrecords/\fR.
        .TP
        .I recordName
        1 to 250 characters of the same, not starting with a dot;
        with \fB.json\fR, a file in its type's folder.
        Tabs and clipboard entries are named by their ids, lowercase UUIDs;
        settings by their keys.
        .TP
        .I field names
        A letter, then letters, digits and underscores; at most 255 characters.
        .TP
        .I first\-seq .log
        A journal segment: exactly 16 decimal digits, a sequence number from 1 to
        2^53 (9007199254740992), then \fB.log\fR.
        Other names in \fIjournal/\fR are ignored.
        .TP
        .I sha256
        An asset: exactly 64 lowercase hexadecimal digits.
        .TP
        .I zoneID
        1 to 64 characters of \fBA\-Z a\-z 0\-9 _ \-\fR.
        .TP
        .I change tags and sequence numbers
        Decimal, from 1 to 2^53; a saved record's tag is the sequence number of the
        journal change that wrote it.
        \fBappliedSeq\fR and \fBcompactedThrough\fR are from 0 to 2^53,
        the second not above the first.
        .TP
        .I device
        The \fBdevice\fR of a batch and the \fBdeviceID\fR of a stamp are
        informational strings; itsypad writes its data directory's UUID.
        .PP
        Names starting with a dot are temporary files.
        Files are regular files and folders are folders:
        a symbolic link anywhere inside the backend is never followed
        (the backend directory itself may be one),
        and a FIFO, socket or device where a file belongs is never opened for reading or writing.
        .PP
        Sizes are checked before anything is read:
        a record file is at most 1 MiB; an asset at most 50 MiB and exactly the
        \fBsize\fR its reference gives; a journal line at most 4 MiB;
        a segment at most 64 MiB; \fIzone.json\fR and \fIstate.json\fR at most 64 KiB.
        Times that itsypad interprets (a tab's \fBlastModified\fR,
        an entry's \fBtimestamp\fR, the physical part of a clock) lie between
        1970\-01\-01 and 9999\-12\-31;
        a clock's counter is at most 2147483647.
        .SH "MALFORMED ENTRIES"
        A record file, a journal line or a single change of a line that breaks
        the rules above, does not parse, or cannot be read as the tab,
        clipboard entry or setting its type says is malformed; so is a journal
        segment that is not a regular file or is over 64 MiB, skipped whole (its
        changes are lost to devices that had not read them). A writer whose last
        segment is such leaves it and starts the next segment past every sequence
        number it could hold (its first one plus 64 Mi).
        Readers skip it and go on with everything else: a device syncs the rest,
        a new device joins, a writer commits, compaction runs.
        The device names it (where, and why) in
        .B itsypad sync status
        and
        .BR "itsypad sync log" ,
        keeps its own version of that record, and exits 1.
        A malformed record stays quarantined across syncs and is read again on
        every sync, so a good version, a deletion, or the file being repaired
        is picked up even after the device's change token has moved past it.
        A journal line that names no record is reported once.
        In a conflict, a device's own tab or setting replaces a malformed version.
        .PP
        What no device can skip is reported as an error and nothing is written:
        a malformed \fIzone.json\fR or \fIstate.json\fR, a journal folder
        that is not a folder (exit 1).
        A backend directory that is missing, or has no \fIzone.json\fR
        (an empty mount point of an unmounted disk) is never re-created by a sync:
        .B itsypad sync
        exits 75, names the path and keeps every pending change;
        .B itsypad sync enable
        creates a backend on purpose.
        .SH "FORMAT 2"
        Format 2 keeps the record form, the change tags and tokens and the limits of
        format 1, and changes who writes which file:
        every file except
        .I zone.json
        has exactly one writer, the device named in its path,
        so a replicating service never has two versions of one file to choose between,
        and no lock spans machines.
        Each record version carries its causal history, a version vector,
        so that any reader can tell whether one version supersedes another or whether
        the two are concurrent.
        Concurrent versions are kept side by side as siblings until a device merges them.
        .SS "Files"
        .nf
        \fIbackend\fR/zone.json
        \fIbackend\fR/devices/\fIdevice\fR/device.json
        \fIbackend\fR/devices/\fIdevice\fR/lock
        \fIbackend\fR/devices/\fIdevice\fR/journal/\fIfirst\-seq\fR.log
        \fIbackend\fR/devices/\fIdevice\fR/assets/\fIsha256\fR
        \fIbackend\fR/records/\fIrecordType\fR/\fIbucket\fR/\fIrecordName\fR.\fIdevice\fR.json   (format 4)
        \fIbackend\fR/records/\fIrecordType\fR/\fIrecordName\fR.\fIdevice\fR.json   (format 2)
        .fi
        .PP
        A \fIdevice\fR is a device id: 1 to 64 characters of
        \fBA\-Z a\-z 0\-9 \-\fR, not starting with \(lq\-\(rq.
        Record types and names follow the format 1 rules, but a record name is at
        most 185 characters: with the device id, its files must still fit a file name.
        Every name is checked against these rules before it is used as a path;
        no symbolic link is followed and no file other than a regular file is opened.
        .TP
        .I zone.json
        As in format 1, with \fBformat\fR 4 (2 for a backend created with its record
        files in one folder per type, see \fBRecord folders\fR).
        It is written by the device that creates the backend; only in the race
        described under \fBConcurrent creation\fR is it written again,
        with identical content.
        .TP
        .IR devices/ device /device.json
        What the device says about itself: \fBformat\fR (the format whose files it
        writes, 4 or 2), \fBdeviceID\fR,
        \fBinstance\fR (random, chosen once per data directory),
        \fBname\fR (its \fBdevice.name\fR; its device id in an encrypted zone), \fBzoneID\fR and \fBzoneCreated\fR
        (the zone its data belongs to; in an encrypted zone also \fBzoneKeyCheckValue\fR, that zone's key check value),
        \fBlastSync\fR (milliseconds since 1970),
        \fBappliedSeq\fR (its journal is reflected in its record files up to here),
        and \fBseen\fR: for every device, the last sequence number of that device's
        journal it has read and applied.
        \fBseen\fR is the device's acknowledgement; it decides when tombstones may go.
        .TP
        .IR devices/ device /lock
        .BR flock (2)
        on it serialises the processes of one machine that write as this device.
        No other device ever takes it.
        .TP
        .IR devices/ device /journal/ first\-seq .log
        The device's append-only journal, in segments as in format 1.
        Sequence numbers count the device's own changes, from 1, without gaps,
        and are never reused, not even after compaction or a replaced zone.
        .TP
        .IR devices/ device /assets/ sha256
        Blobs this device stored, as in format 1.
        A version refers only to assets in its writer's folder;
        a reader accepts a blob of the right size and checksum from any device's folder.
        .TP
        .IR records/ recordType / bucket / recordName . device .json
        The device's current version of the record: an object with \fBzone\fR,
        \fBversion\fR (the version vector), \fBderived\fR (true for a merge, see below),
        \fBdeleted\fR (true for a tombstone), \fBrecord\fR (the record, as in format 1,
        without fields when deleted) and \fBbase\fR (the version it started from,
        see \fBCommon ancestors\fR).
        After all devices have synced with no new edits, a live record has one
        such file and a deleted one has a tombstone until it is removed.
        Device ids contain no dot, so the last dot of the name separates the device.
        .SS "Record folders"
        In format 4 a record's files are in the folder \fIbucket\fR of its type: the
        first byte of the SHA\-256 of the record name (its UTF\-8 bytes) as two
        lowercase hex digits, what
        .B "printf %s NAME | sha256sum | cut \-c1\-2"
        prints; so a type has at most 256 folders.
        Anything else in a type's folder (another name, a file, a symbolic link) is not
        data, and neither is a record file in a folder its name does not hash to.
        In format 2 every file of a record type is in the type's folder.
        A change then rewrites a folder of a few dozen names rather than one of every
        record: what a git remote stores and sends for every commit (for 10,000 records,
        a tree of about 700 KB per commit in format 2).
        Files rather than a folder per record: a folder per record would cost a
        directory for every record, which made copying 10,000 records ten times slower.
        .PP
        The placement is fixed when the zone is created, and devices of this version
        read and write both.
        A backend that an earlier version created in format 2 keeps its placement:
        moving every device's files would break the rule of one writer per file in a
        replicated folder.
        A version that reads format 2 but not format 4 refuses a format 4 backend as
        a newer format (and an encrypted one in format 4's layout as a malformed
        \fIzone.json\fR), writing nothing to it.
        A device created before format 4 names no placement in \fIdevice.json\fR
        other than \fBformat\fR 2; in the race described under
        \fBConcurrent creation\fR the winning zone keeps the placement its creator's
        \fIdevice.json\fR names.
        .SS "Version vectors"
        A version vector maps device ids to sequence numbers:
        for each device, its latest change to the record that this version includes.
        Its text form, which is also the version's \fBrecordChangeTag\fR, lists the
        entries sorted by device id: \fIdevice\fB:\fIseq\fR, separated by commas.
        Version X covers version Y when every entry of Y is at most X's entry for the
        same device; two versions neither of which covers the other are concurrent.
        .PP
        A device that changes a record writes a version whose vector is that of the
        version it started from, with its own entry set to the sequence number of the
        change.
        A device that merges siblings writes a \fIderived\fR version: its vector is the
        join (the entry-wise maximum) of the siblings' vectors, with no new entry, and
        its content is a function of the siblings alone.
        Two devices that merge the same siblings at once therefore write the same
        version; they do not start another round of conflicts.
        Versions with equal vectors are one version: if their contents differ
        (two releases that merge differently), the one whose record encodes with the
        smaller SHA-256 is the version.
        .SS "Siblings and merges"
        A record's visible versions are its record files in this copy and the versions
        in the journal lines a reader has read.
        Those that no other visible version covers are its siblings.
        With one sibling the record is that version; when every sibling is a tombstone
        the record is deleted, and concurrent tombstones need no merge.
        With several, every reader is shown all of them, as CouchDB shows
        \fB_conflicts\fR, and the first device to sync merges them with the rules of
        \fBitsypad\fR(1):
        tabs merge three ways against their common ancestor, edits that overlap keep
        the newer edit (by hybrid clock) and a conflict copy of the other;
        clips, whose text never changes, are pinned if any sibling is; settings take the newer value by hybrid clock;
        a live sibling beats a concurrent tombstone (an edit beats a delete).
        Merges fold the siblings in the order of their vectors' text form and use
        nothing but the siblings: the merged tab's clock is the largest of theirs, and
        a conflict copy gets an id made from the SHA-256 of the tab's id and the
        losing version, so every device that makes it makes the same record.
        A merge that also carries this device's unsent edits is an ordinary change,
        not a derived version.
        .PP
        A save says which version it started from.
        It succeeds when that version covers every version of the record visible in
        the writer's copy, and otherwise fails with the siblings, so that the device
        merges first.
        Concurrent versions written in other copies and not yet replicated become
        siblings when they arrive; that is the normal case, not an error.
        .SS "Common ancestors"
        An ordinary change carries as \fBbase\fR the version it started from, vector and
        fields; a device that changes its own latest version again keeps that version's
        base, so the base stays the last version it shared with others.
        A derived version carries the ancestor its merge used.
        The common ancestor of siblings A and B is whichever of A, B and their bases has
        the vector that is the entry-wise minimum of A's and B's;
        when none has, there is no common ancestor, and a tab keeps both contents
        (the newer, and a conflict copy).
        .SS "Removing superseded versions"
        When a device ends a sync, it looks at the versions it read in other devices'
        journals since its last sync.
        Once one of them covers its own current version of a record,
        or has an equal vector and is the one the sibling rule keeps
        (the smaller SHA-256, then the smaller device id),
        it removes its own record file and writes a \fBdrop\fR change to its journal
        naming the device and sequence number of the change that wrote that version.
        .PP
        A delete writes a tombstone: a version with \fBdeleted\fR true.
        Its writer removes it, with a \fBdrop\fR change naming no version, once no
        live version of another device is left in its copy and every other device
        listed in \fIdevices/\fR or named in a \fBseen\fR, whose \fBlastSync\fR
        (or creation) is within the retention (90 days), reports in \fBseen\fR that it
        has read the tombstone; while such a device's \fIdevice.json\fR has not
        arrived, nothing is removed.
        A tombstone whose line was compacted away is found in the writer's record files.
        A device that has not synced for longer than the retention is not waited for:
        when it comes back, its change token has expired, so it fetches everything
        again, as after an expired token in format 1, and removes what was deleted
        meanwhile; its unsent edits are kept and sent.
        The consequence: a device that was away longer than the retention and kept a
        record that was deleted meanwhile only learns of the deletion from that full
        fetch.
        .PP
        A reader does not read past a \fBdrop\fR before it has read the journal of the
        device it names as far as the change it names:
        a version disappears only once what replaced it is visible.
        Removing a file is not a change a reader is shown: it already holds the
        version that replaced it, or will read it there.
        .SS "Journal lines"
        As in format 1, one line per committed batch, with \fBseq\fR first,
        \fBdevice\fR, \fBinstance\fR, \fBzone\fR, \fBtime\fR and \fBchanges\fR,
        and also \fBfiles\fR: the XOR of the SHA-256 of
        \fIrecordType\fB/\fIrecordName\fB/\fIversion\fR over the device's record files
        after the batch, in hexadecimal.
        A change has \fBseq\fR, \fBop\fR and, but for a checkpoint,
        \fBrecordType\fR and \fBrecordName\fR.
        A \fBsave\fR or \fBdelete\fR carries the whole new version
        (as in its record file) as \fBversion\fR; a \fBdrop\fR carries \fBdrop\fR,
        with \fBversion\fR (the vector removed) and, for a superseded version,
        \fBcoveredBy\fR (\fBdevice\fR and \fBseq\fR of the change that wrote the version
        covering it).
        After a compaction the journal's first line is a \fBcheckpoint\fR, alone on its
        line, with the \fBfiles\fR of that moment and \fBcheckpoint\fR.\fBrequires\fR:
        for each device, the furthest change that a drop before it waited for.
        .SS "Atomicity and compaction"
        A device commits a batch by appending its line to its own journal with one
        .BR write (2)
        and
        .BR fsync (2),
        holding its
        .IR lock ,
        then updates its record files and \fBappliedSeq\fR;
        after a crash it rolls its own journal forward, as in format 1.
        Readers take no lock.
        .PP
        A device compacts only its own journal, when it ends a sync: once the journal
        is larger than 1 MiB, it starts a new segment with a \fBcheckpoint\fR line and
        removes the older segments.
        A reader whose position in that journal is older than the checkpoint reads that
        device's record files again; the other devices' positions stay valid.
        .SS "Change tokens"
        A token is a vector of journal positions: \fB2:\fIzoneID\fB:\fR followed by
        \fIdevice\fB.\fIseq\fB.\fIsegment\fB.\fIoffset\fR for each device read,
        separated by \(lq/\(rq.
        An incremental fetch reads every device's journal from its position,
        so its cost follows the number of changes;
        each change comes with the record's current siblings,
        and a version covered by the one the device already holds is ignored.
        A device whose position (none, for a device not in the token) is before its
        last checkpoint is read from its record files first (a full fetch of that device
        only), and from its journal after them; a full fetch (no token) does that for
        every compacted device.
        A device's record files count as read only when the XOR of their hashes equals
        the \fBfiles\fR of a line of its journal from the checkpoint on; reading then
        continues after that line.
        All the devices read from record files in one fetch are read together, and one
        whose \fBrequires\fR is not met by the positions that reading every journal in
        this copy reaches waits (another device's journal may itself wait for these
        record files, so the positions are those reached with them read).
        A device whose own \fBlastSync\fR is older than the retention gets an expired
        token and fetches everything; the tokens of that full fetch's pages do not expire.
        .SS "Waiting for replication"
        Files arrive in any order, so nothing missing is taken for a deletion or
        for corruption.
        A device's journal is read as far as it is complete: up to a gap between
        segments, a last line without its newline, a line naming an asset that has not
        arrived, or record files that do not yet match any line.
        There it waits; the token keeps that device's position, the other devices'
        journals are still read, and the next sync tries again.
        \fBitsypad sync status\fR lists what a device waits for, and since when.
        A line that is complete but malformed, a segment larger than the limit, or a
        journal folder or segment that is a symbolic link or not a regular file, is
        quarantined: that device's journal is read no further, the reason is reported
        (as a quarantined entry, not a wait), the other devices' are still read, and
        the next sync looks again.
        .PP
        Names that the rules above do not allow are never read and never removed:
        conflict copies (\fIx\fB.sync\-conflict\-\fIdate\fB\-\fItime\fB\-\fIid\fB.json\fR,
        \fIx\fB (conflicted copy \fIdate\fB).json\fR),
        temporary files (\fB.syncthing.\fIx\fB.tmp\fR, \fB~syncthing~\fIx\fB.tmp\fR,
        \fIx\fB.~tmp~\fR), \fB.stfolder\fR, \fB.stignore\fR, \fB.dropbox*\fR,
        iCloud placeholders (\fB.\fIx\fB.icloud\fR) and anything else.
        itsypad's own temporary files (\fB.tmp\-\fR) older than a day are removed.
        .SS "Duplicate device ids"
        A data directory copied to another machine (a cloned home directory or virtual
        machine) brings the same device id, and two machines would write the same files.
        Every journal line and \fIdevice.json\fR names the \fBinstance\fR of the data
        directory that wrote it.
        A device that finds its \fIdevice.json\fR or the last line of its journal
        naming another instance, its journal ending before its \fBappliedSeq\fR,
        or conflict copies of its own files in its folder,
        writes nothing more as that id: it takes a new device id, says so on standard
        error, and sends all its data again as a new device.
        The old id's files remain; they are superseded like any other versions.
        .SS "Concurrent creation"
        Two devices may each create a zone before either's \fIzone.json\fR has reached
        the other.
        Each names its zone, with its creation time, in its \fIdevice.json\fR.
        The zone with the smallest zone id among \fIzone.json\fR and every
        \fIdevice.json\fR naming a zone of the same key check value (none, or
        \fIzone.json\fR's) wins, whichever \fIzone.json\fR the service kept;
        a device that finds \fIzone.json\fR naming another zone rewrites it with the
        winner's.
        A device whose data belongs to a losing zone removes its own record files,
        starts its journal again with a checkpoint of no files (its sequence numbers go
        on) and sends everything again into the winner, as after a replaced backend;
        nothing is lost.
        Record files of another zone are ignored; a journal line of another zone is
        waited on until its writer has moved.
        Both devices wrote \fIzone.json\fR at first, so the service may keep a
        conflict copy of it.
        .SS "Migration"
        The first device of a version that writes format 2's rules to open an unencrypted
        format 1 backend (\fBsync\fR, \fBsync enable\fR, \fBsync compact\fR,
        \fBsync watch\fR) converts it, holding the format 1 lock:
        it removes \fIdevices/\fR left by an interrupted conversion,
        appends every current record to its own journal as versions of its own
        (a record format 1 readers quarantined as malformed is not carried over),
        writes its \fIdevice.json\fR, and then replaces \fIzone.json\fR with format 4
        and the same zone id (the commit).
        It then removes the format 1 record files, \fIjournal/\fR, \fIassets/\fR,
        \fIlock\fR and, last, \fIstate.json\fR, and writes its record files from its journal.
        A crash before the commit leaves format 1 as it was, and the next conversion
        starts again; after it, a \fIstate.json\fR beside a format 4 \fIzone.json\fR
        tells the next device to open the backend to finish the removal, and the
        converting device writes the record files its journal holds the next time it
        opens the zone.
        Devices still on format 1 then refuse the newer format (exit 1) and change
        nothing; their changes wait in their queues until they are upgraded.
        Every device's format 1 token has expired, so it fetches everything once;
        what it had not sent yet is sent then, and nothing else.
        An encrypted zone (format 3) is not converted.
        Format 2 keeps every format 1 guarantee in a coherent shared folder (NFS, SMB,
        a USB disk): crash safety, atomic batches, compaction, replaced zones.
        .SS "Limits"
        At most 1000 devices ever write to one backend.
        A record file is at most 3 MiB (a record and its base, sealed in an encrypted zone),
        a journal line 8 MiB, \fIdevice.json\fR 64 KiB;
        larger files are quarantined.
        Sequence numbers are at most 2^53.
        Requests have the format 1 limits.
        After quiescence the backend holds one record file per live record, one
        tombstone per record deleted within the retention, and, per device,
        \fIdevice.json\fR, \fIlock\fR, a journal of a few segments and its assets.
        Assets no version refers to are not removed yet.
        .SS "What is safe to delete by hand"
        Conflict copies and temporary files left by the service, and everything else
        not named in these rules.
        Removing a file these rules name can lose data for devices that join later.
        .SH "SECURITY"
        The backend is shared with every device that syncs through it, and with
        whatever else can write to it: a sync service, a file server, another user.
        itsypad treats all of it as untrusted input.
        What follows holds for both formats.
        .PP
        A peer that can write the backend can do what any device could:
        read everything synced (unless the backend is encrypted: see ENCRYPTION), change or delete synced tabs,
        clipboard entries and synced settings, replace the backend (every device then
        sends its data again), and make devices miss changes or report malformed
        entries until someone repairs or compacts the backend.
        .PP
        It cannot read, write, create or delete any file outside the backend and the
        devices' data directories: names are checked before they become paths,
        and no symbolic link is followed.
        It cannot crash a device, make it hang on a FIFO or device file,
        or make it read more than the limits above.
        It cannot change a device setting (\fBsync.backend\fR, \fBeditor\fR,
        \fBdevice.name\fR, \fBsync.enabled\fR):
        records of device settings are ignored.
        It cannot make local-only clipboard entries or file-backed tabs leave a device,
        delete a tab with edits not yet sent (an edit beats a delete),
        or make a device re-create a backend that is gone.
        .PP
        Keep the backend directory readable and writable only by you
        (mode 0700, as
        .B itsypad sync enable
        creates it); itsypad warns when other users can read or write it.
        .SH "ENCRYPTION"
        A backend created with \fBitsypad sync enable\fR \fIDIR\fR \fB\-\-encrypt\fR, or with
        \fBitsypad sync enable git:\fR\fIURL\fR (encrypted unless \fB\-\-no\-encrypt\fR), is end\-to\-end encrypted.
        Its zone.json has \fBformat\fR 3, a number of its own so that an itsypad
        that does not know encryption refuses it as a newer format and never writes plaintext into it.
        It has three more members:
        \fBlayout\fR, the format whose files the zone uses
        (4: format 4's files, one writer per file, which is what new encrypted backends use;
        2: format 2's files, which encrypted backends created before format 4 keep;
        1: format 1's files, which encrypted backends created before format 2 keep, and which only
        format 1's reader opens: such a zone moves to layout 4 with its next key rotation),
        \fBencryption\fR (\fB"xchacha20poly1305\-v1"\fR) and \fBkeyCheckValue\fR
        (32 hex digits of HMAC\-SHA256 under a key derived from the sync key; it reveals nothing about the key).
        Any other combination (a format 3 zone without one of them, a layout other than 1, 2 or 4,
        or one of them in a format 1, 2 or 4 zone) is corrupt, except a layout above 4:
        a newer one, which this version refuses without writing anything.
        A device whose key gives another value stops before it reads or writes anything;
        a device without a key is refused an encrypted backend, and a device with a key
        refuses a backend that is not encrypted.
        The key itself is never in the backend: each device keeps it in its data directory (\fIsync\-key\fR, mode 0600).
        Each purpose (records, assets, name hashing, key check) has its own key derived with HKDF\-SHA256.
        .SS "Layouts 2 and 4 (format 2's and format 4's files)"
        Every file is written by one device, as in FORMAT 2.
        In each version a device writes, to its journal and its record file, the record's fields and its
        base's fields (see \fBCommon ancestors\fR) are replaced by the one field \fBsealed\fR: base64 of a
        format byte (1), a random 24\-byte nonce, and the XChaCha20\-Poly1305 encryption (with its
        16\-byte tag) of the JSON object \fB{"fields": \fR...\fB, "base": \fR...\fB}\fR; the base keeps
        only its \fBversion\fR in the clear, and a tombstone is sealed too (with no fields).
        The associated data is, each part length\-prefixed: the zone ID, the record type and name,
        the device that wrote the version (the folder its files are in), its version vector, whether it
        is derived and whether it is a tombstone, its base's vector, and its creation and modification
        stamps. So a version copied to another record, another device's files, another vector or zone,
        or turned from a tombstone into a live version or back, does not verify; a replayed older
        version verifies only as what it was, and is covered by the newer ones (or, once a journal is
        compacted, disagrees with the checkpoint's digest of the record files and is waited on).
        Setting records, and the tombstones of settings, are named by 64 hex digits of a keyed hash
        (HMAC\-SHA256) of their name, so no setting name is in the backend; a hashed name this version
        does not know (a newer itsypad's setting) is ignored.
        Assets are sealed (bound to the zone) before they are stored, and named by the SHA\-256 of their
        sealed bytes; a field that references an asset is also kept in the clear next to \fBsealed\fR,
        so that readers wait for the asset to arrive, and must equal the sealed copy.
        In \fIdevice.json\fR the device's \fBname\fR is its device id.
        .PP
        Version vectors, journal positions, drops, checkpoints and the digests of record files stay in
        the clear: every device needs them to order versions and to wait for replication without the
        key. They are not authenticated: whoever can write the folder can make a device wait, or drop
        its own superseded files early, but cannot make it apply content that the key did not seal
        for that record, device and version.
        .PP
        A version that does not verify is malformed (see MALFORMED ENTRIES): it is not a version
        (a sibling it is not), the sync that reads it names its record file (exit 1), and
        \fBsync status\fR and \fBsync log\fR keep naming it while it is the record's only version;
        local data stays, and a new version from any device supersedes it.
        .SS "Layout 1 (format 1's files)"
        Every record has the field \fBsealed\fR: base64 as above, of the JSON of all the record's fields.
        The associated data is the zone ID, the record type and the record name,
        so a sealed field copied to another record, type or zone does not verify.
        Setting records are named by a keyed hash of the setting's key,
        which travels inside the sealed fields and is checked against the name.
        Assets are sealed as in layouts 2 and 4.
        A record that does not verify is malformed, as in layouts 2 and 4.
        So is a tab version older than the one a device holds without local edits
        (its edit history is included in the device's): a replay of a version that once verified.
        Layout 1 has format 1's single shared journal: it is not safe in a folder a replicating service
        keeps in step (use layout 4, or rotate the key, which moves the zone there).
        .SS "Key rotation"
        \fBitsypad sync key rotate\fR replaces the key: after a sync, it builds a new encrypted zone in
        layout 4 (new zone ID, new key check value) holding everything the device has in a hidden sibling
        directory, \fI.NAME.itsypad\-replacement\fR (NAME being the backend directory's name), then,
        holding the backend's lock (layout 1) or the lock of every device that has one in this copy
        (layouts 2 and 4), and only if zone.json is still the one it started from, renames the backend to
        \fI.NAME.itsypad\-retired\fR and the replacement to the backend's name, and removes the retired one.
        Between the two renames the backend directory is missing: devices retry later (exit 75).
        A device still holding the old key finds a key check value it does not match and stops before
        writing anything; once given the new key it treats the new zone as a replaced backend and sends
        its data again.
        In a folder a service replicates, a device that had not yet seen the rotation may have written into
        the old zone in its own copy, and the service may bring those files back into the new zone:
        its \fIdevice.json\fR names the old zone with the old key check value, so it takes no part in
        \fBConcurrent creation\fR, and its journal lines of the old zone are waited on until, given the new
        key, it moves into the new zone (see \fBConcurrent creation\fR) and sends everything again: what it
        wrote into the old zone is still in its data directory, so nothing is lost.
        The new key waits in the data directory as \fIsync\-key.next\fR until the new zone is in place;
        the rotating device's next sync finishes a rotation a crash interrupted (or undoes one that never
        reached the backend) and removes either sibling directory.
        Both are safe to delete by hand when no rotation is running.
        .PP
        With a git remote the replacement is built beside the clone's working tree and committed, through a
        separate index, as one commit on top of the remote's tip that holds the new zone and nothing of the
        old one; the push of that commit is the rotation's commit point.
        A remote that moved meanwhile refuses it and nothing is rotated.
        A rotation killed around its push is decided by the next sync from the zone.json on the remote's tip:
        the new key's check value makes the new key the device's, the old one's discards it.
        A device whose unpushed commits were made for the old zone keeps them under \fIrefs/itsypad/kept\fR
        and, once given the new key, sends its data again.
        The old zone's files stay in the remote's history, readable with the old key only.
        .SS "What stays visible"
        To whoever can read the backend:
        the zone ID, format, layout and creation time; that the backend is encrypted, and the key check value;
        record types; record names (random ids for tabs and clips, keyed hashes for settings and their tombstones);
        change tags and version vectors; device ids, which device wrote which version, and when;
        creation and modification times and the device IDs that made them;
        journal positions, drops and checkpoints (which records changed together, and when);
        sizes of records and assets, and which record references which asset; and tombstones' names
        (the type and random id of a deleted tab or clip).
        Tab names and content, languages, clip text and pinned state, setting names and values and device
        names are not visible.
        .SH "SEE ALSO"
        .BR itsypad (1),
        .BR itsypad\-settings (1),
        .BR flock (2)

        """#
    )
}
