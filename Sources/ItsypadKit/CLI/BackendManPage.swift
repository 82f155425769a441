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
        .TH ITSYPAD\-BACKEND 5 2026-11-28 "itsypad 0.1.0" "File Formats"
        .SH "NAME"
        itsypad\-backend \- the directory itsypad syncs through
        .SH "SYNOPSIS"
        .nf
        \fIbackend\fR/zone.json
        \fIbackend\fR/devices/\fIdevice\fR/device.json
        \fIbackend\fR/devices/\fIdevice\fR/lock
        \fIbackend\fR/devices/\fIdevice\fR/journal/\fIfirst\-seq\fR.log
        \fIbackend\fR/devices/\fIdevice\fR/assets/\fIsha256\fR
        \fIbackend\fR/records/\fIrecordType\fR/\fIbucket\fR/\fIrecordName\fR.\fIdevice\fR.json
        .fi
        .SH "DESCRIPTION"
        A sync backend is a directory that every device syncing with it can reach:
        a local path, an NFS or SMB mount, a USB disk, a folder that a replicating
        service (Syncthing, Dropbox, Nextcloud, iCloud Drive, OneDrive) keeps in step
        on every machine, or the working tree of a git remote's clone.
        Each device names it in its \fBsync.backend\fR setting.
        It plays the part of a CloudKit private database holding a single record zone:
        records are saved and deleted in atomic batches, each version carries a change tag,
        and a device asks for the changes made since its last change token.
        .PP
        Every file except \fIzone.json\fR has exactly one writer, the device named in
        its path, so a replicating service never has two versions of one file to choose
        between, and no lock spans machines.
        Each record version carries its causal history, a version vector,
        so that any reader can tell whether one version supersedes another or whether
        the two are concurrent.
        Concurrent versions are kept side by side as siblings until a device merges them.
        In a folder that every device sees the same at every moment the same rules hold,
        with the same crash safety and atomic batches.
        .PP
        Every file is JSON written with sorted keys, except the assets, which are raw bytes.
        A directory holding a \fIzone.json\fR of any other format is refused
        (exit 1, naming the directory and the format it holds) and nothing is written to it.
        .SH "FILES"
        .TP
        .I zone.json
        The zone: an object with \fBformat\fR (4; 3 for an encrypted backend, see ENCRYPTION),
        \fBzoneID\fR and \fBcreated\fR (milliseconds since 1970).
        A device that finds a different \fBzoneID\fR than the one it synced with
        knows the backend was replaced, and sends everything again.
        It is written by the device that creates the backend; only in the race
        described under \fBConcurrent creation\fR is it written again.
        .TP
        .IR devices/ device /device.json
        What the device says about itself: \fBformat\fR (4, the format whose files it
        writes), \fBdeviceID\fR,
        \fBinstance\fR (random, chosen once per data directory),
        \fBname\fR (its \fBdevice.name\fR; its device id in an encrypted zone), \fBzoneID\fR and \fBzoneCreated\fR
        (the zone its data belongs to; in an encrypted zone also \fBzoneKeyCheckValue\fR, that zone's key check value),
        \fBcreated\fR and \fBlastSync\fR (milliseconds since 1970),
        \fBappliedSeq\fR (its journal is reflected in its record files up to here),
        \fBseen\fR (for every device, the last sequence number of that device's
        journal it has read and applied: its acknowledgement, which decides when
        tombstones may go), \fBcollectedThrough\fR (how far it has looked for versions that
        supersede its own) and \fBtombstonesSweptThrough\fR.
        .TP
        .IR devices/ device /lock
        .BR flock (2)
        on it serialises the processes of one machine that write as this device.
        No other device ever takes it.
        .TP
        .IR devices/ device /journal/ first\-seq .log
        The device's append-only journal, in segments named by the sequence number of
        their first change (16 digits); a new segment starts once the last one reaches 4 MiB.
        Sequence numbers count the device's own changes, from 1, without gaps,
        and are never reused, not even after compaction or a replaced zone.
        .TP
        .IR devices/ device /assets/ sha256
        Content-addressed blobs of up to 50 MiB that this device stored, named by the
        lowercase hexadecimal SHA-256 of their content.
        Tab content too large for a record (over 900,000 bytes) is stored here and
        referenced from the record; an asset is written before the batch that references it.
        A version refers only to assets in its writer's folder;
        a reader accepts a blob of the right size and checksum from any device's folder.
        Assets no version refers to are not removed yet.
        .TP
        .IR records/ recordType / bucket / recordName . device .json
        The device's current version of the record: an object with \fBzone\fR,
        \fBversion\fR (the version vector), \fBderived\fR (true for a merge, see below),
        \fBdeleted\fR (true for a tombstone), \fBrecord\fR (the record, see RECORDS,
        without fields when deleted) and \fBbase\fR (the version it started from,
        see \fBCommon ancestors\fR).
        After all devices have synced with no new edits, a live record has one
        such file and a deleted one has a tombstone until it is removed.
        Device ids contain no dot, so the last dot of the name separates the device.
        .SS "Record folders"
        A record's files are in the folder \fIbucket\fR of its type: the
        first byte of the SHA\-256 of the record name (its UTF\-8 bytes) as two
        lowercase hex digits, what
        .B "printf %s NAME | sha256sum | cut \-c1\-2"
        prints; so a type has at most 256 folders.
        Anything else in a type's folder (another name, a file, a symbolic link) is not
        data, and neither is a record file in a folder its name does not hash to.
        A change then rewrites a folder of a few dozen names rather than one of every
        record: what a git remote stores and sends for every commit.
        Files rather than a folder per record: a folder per record would cost a
        directory for every record, which made copying 10,000 records ten times slower.
        .SH "RECORDS"
        The \fBrecord\fR of a version is in the record-dictionary form of
        CloudKit Web Services:
        .RS 4
        .EX
        {"created":{"deviceID":"\fIdevice\fR","timestamp":1763769600000},
         "fields":{"pinned":{"type":"INT64","value":0},
                   "text":{"type":"STRING","value":"hello"},
                   "timestamp":{"type":"TIMESTAMP","value":1763769600000}},
         "modified":{"deviceID":"\fIdevice\fR","timestamp":1763769600000},
         "recordChangeTag":"\fIdevice\fR:42",
         "recordName":"3f2a9c1e\-0d4b\-4c55\-9a0e\-5b7f2d8e6a11",
         "recordType":"ClipboardEntry"}
        .EE
        .RE
        .PP
        \fBrecordChangeTag\fR is the text form of the version's vector.
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
        \fBnameClock\fR and \fBlanguageClock\fR (STRING, the clock of the edit
        that last set the name or the language, each with its lock;
        absent when it is \fBclock\fR);
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
        tab contents then merge three ways (the name and the language each follow
        the version whose \fBnameClock\fR or \fBlanguageClock\fR is later, so an
        edit that left the name alone does not undo a rename; a merge is stamped
        from the two clocks, never the merger's), and pins merge as logical OR, so an unpin made after seeing
        the pin sticks.
        A record without \fBhistory\fR counts as its own edit,
        \fBclock\fR for a tab and none for a clipboard entry.
        .SH "DELETIONS"
        A tab or clipboard entry removed on purpose (\fBtab rm\fR, \fBclip rm\fR,
        \fBclip clear\fR) goes in one batch that deletes the record and saves its
        \fBTombstone\fR record.
        A device holding unsent edits of a record it finds deleted keeps them
        (an edit beats a deletion) unless the tombstone's history includes them:
        then the deleter had seen them, and the deletion stands.
        \fBitsypad sync compact\fR removes \fBTombstone\fR records older than 90 days.
        A deletion without a \fBTombstone\fR record (an entry evicted past
        \fBclipboard.maxEntries\fR or pruned, which any device would remove again)
        says nothing of what it had seen:
        unsent edits of a tab then win over it, and a clipboard entry goes whatever
        waits (a pin never brings an entry back).
        .SH "VERSIONS"
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
        A tab and the tombstone of its removal are read together, whichever order the
        devices' journals bring them in.
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
        again and removes what was deleted meanwhile; its unsent edits are kept and sent.
        The consequence: a device that was away longer than the retention and kept a
        record that was deleted meanwhile only learns of the deletion from that full
        fetch.
        .PP
        A reader does not read past a \fBdrop\fR before it has read the journal of the
        device it names as far as the change it names:
        a version disappears only once what replaced it is visible.
        Removing a file is not a change a reader is shown: it already holds the
        version that replaced it, or will read it there.
        .SH "JOURNAL"
        Each line of a segment is one committed batch, a JSON object with
        \fBseq\fR (the first change's sequence number, always the first key),
        \fBdevice\fR, \fBinstance\fR, \fBzone\fR, \fBtime\fR (milliseconds since 1970),
        \fBchanges\fR and \fBfiles\fR: the XOR of the SHA-256 of
        \fIrecordType\fB/\fIrecordName\fB/\fIversion\fR over the device's record files
        after the batch, in hexadecimal.
        A change has \fBseq\fR (consecutive within the batch and across batches),
        \fBop\fR and, but for a checkpoint, \fBrecordType\fR and \fBrecordName\fR.
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
        .IR lock ;
        a last line without its newline was never committed, and the device cuts it off.
        It then updates its record files and \fBappliedSeq\fR,
        each file replaced atomically (a temporary file in the same directory,
        fsync, rename, fsync of the directory);
        after a crash it rolls its own journal forward.
        Readers take no lock.
        .PP
        A device compacts only its own journal, when it ends a sync: once the journal
        is larger than 1 MiB, it starts a new segment with a \fBcheckpoint\fR line and
        removes the older segments.
        A reader whose position in that journal is older than the checkpoint reads that
        device's record files again; the other devices' positions stay valid.
        .SS "Change tokens"
        A change token is opaque to devices.
        It is a vector of journal positions: \fB2:\fIzoneID\fB:\fR followed by
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
        A token of another zone means the backend was replaced.
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
        .PP
        Names that the rules of this page do not allow are never read and never removed:
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
        .SH "NAMES AND LIMITS"
        Every name below is checked against its grammar before it is used,
        and only a name that passes becomes part of a path;
        paths stay inside the backend directory.
        .TP
        .I device
        A device id: 1 to 64 characters of \fBA\-Z a\-z 0\-9 \-\fR, not starting with
        \(lq\-\(rq; itsypad writes its data directory's UUID.
        At most 1000 devices ever write to one backend.
        .TP
        .I recordType
        1 to 255 characters of \fBA\-Z a\-z 0\-9 . _ \-\fR, not starting with a dot.
        .TP
        .I recordName
        1 to 185 characters of the same, not starting with a dot: with the device id,
        its files must still fit a file name.
        Tabs and clipboard entries are named by their ids, lowercase UUIDs;
        settings by their keys.
        .TP
        .I bucket
        Exactly two lowercase hexadecimal digits (see \fBRecord folders\fR).
        .TP
        .I field names
        A letter, then letters, digits and underscores; at most 255 characters.
        .TP
        .I first\-seq .log
        A journal segment: exactly 16 decimal digits, a sequence number from 1 to
        2^53 (9007199254740992), then \fB.log\fR.
        Other names in a journal folder are ignored.
        .TP
        .I sha256
        An asset: exactly 64 lowercase hexadecimal digits.
        .TP
        .I zoneID
        1 to 64 characters of \fBA\-Z a\-z 0\-9 _ \-\fR.
        .TP
        .I sequence numbers
        From 1 to 2^53.
        .PP
        Files are regular files and folders are folders:
        a symbolic link anywhere inside the backend is never followed
        (the backend directory itself may be one),
        and a FIFO, socket or device where a file belongs is never opened for reading or writing.
        .PP
        Sizes are checked before anything is read:
        a record file is at most 3 MiB (a record and its base, sealed in an encrypted zone);
        an asset at most 50 MiB and exactly the \fBsize\fR its reference gives;
        a journal line at most 8 MiB; \fIdevice.json\fR and \fIzone.json\fR at most 64 KiB.
        Times that itsypad interprets (a tab's \fBlastModified\fR,
        an entry's \fBtimestamp\fR, the physical part of a clock) lie between
        1970\-01\-01 and 9999\-12\-31;
        a clock's counter is at most 2147483647.
        After quiescence the backend holds one record file per live record, one
        tombstone per record deleted within the retention, and, per device,
        \fIdevice.json\fR, \fIlock\fR, a journal of a few segments and its assets.
        .SH "MALFORMED ENTRIES"
        A record file that breaks the rules above, does not parse, or cannot be read
        as the tab, clipboard entry or setting its type says is malformed:
        it is not a version, and readers go on with everything else.
        A journal line that is complete but malformed, a segment larger than 12 MiB,
        or a journal folder or segment that is a symbolic link or not a regular file,
        is quarantined: that device's journal is read no further, the other devices'
        are still read, and the next sync looks again.
        The device names what it skipped (where, and why) in
        .B itsypad sync status
        and
        .BR "itsypad sync log" ,
        keeps its own version of that record, and exits 1.
        A malformed record stays quarantined across syncs and is read again on
        every sync, so a good version, a deletion, or the file being repaired
        is picked up even after the device's change token has moved past it.
        .PP
        What no device can skip is reported as an error and nothing is written:
        a malformed \fIzone.json\fR, or one of another format (exit 1).
        A backend directory that is missing, or has no \fIzone.json\fR
        (an empty mount point of an unmounted disk) is never re-created by a sync:
        .B itsypad sync
        exits 75, names the path and keeps every pending change;
        .B itsypad sync enable
        creates a backend on purpose.
        .SS "What is safe to delete by hand"
        Conflict copies and temporary files left by the service, and everything else
        not named in these rules.
        Removing a file these rules name can lose data for devices that join later.
        .SH "SECURITY"
        The backend is shared with every device that syncs through it, and with
        whatever else can write to it: a sync service, a file server, another user.
        itsypad treats all of it as untrusted input.
        .PP
        A peer that can write the backend can do what any device could:
        read everything synced (unless the backend is encrypted: see ENCRYPTION), change or delete synced tabs,
        clipboard entries and synced settings, replace the backend (every device then
        sends its data again), and make devices miss changes or report malformed
        entries until someone repairs the backend.
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
        Its files are those described above.
        Its \fIzone.json\fR has \fBformat\fR 3, a number of its own so that an itsypad
        that does not know encryption refuses it and never writes plaintext into it,
        and three more members:
        \fBlayout\fR (4: the format whose files it uses),
        \fBencryption\fR (\fB"xchacha20poly1305\-v1"\fR) and \fBkeyCheckValue\fR
        (32 hex digits of HMAC\-SHA256 under a key derived from the sync key; it reveals nothing about the key),
        and \fBmac\fR: 64 hex digits of HMAC\-SHA256, under a key of its own derived from the sync key, of the
        length\-prefixed strings "itsypad zone", \fBzoneID\fR, \fBformat\fR, \fBcreated\fR, \fBlayout\fR,
        \fBencryption\fR and \fBkeyCheckValue\fR (numbers in decimal).
        Any other combination of these members is corrupt, and so is a \fIzone.json\fR whose \fBmac\fR
        does not verify with the device's key: nothing is read or written.
        A device whose key gives another value stops before it reads or writes anything;
        a device without a key is refused an encrypted backend, and a device with a key
        refuses a backend that is not encrypted.
        The key itself is never in the backend: each device keeps it in its data directory (\fIsync\-key\fR, mode 0600).
        Each purpose (records, assets, name hashing, key check, zone authentication) has its own key derived with HKDF\-SHA256.
        .SS "Sealed versions"
        In each version a device writes, to its journal and its record file, the record's fields and its
        base's fields (see \fBCommon ancestors\fR) are replaced by the one field \fBsealed\fR: base64 of a
        format byte (1), a random 24\-byte nonce, and the XChaCha20\-Poly1305 encryption (with its
        16\-byte tag) of the JSON object \fB{"fields": \fR...\fB, "base": \fR...\fB}\fR, padded; the base keeps
        only its \fBversion\fR in the clear, and a tombstone is sealed too (with no fields).
        The associated data is, each part length\-prefixed: the zone ID, the record type and name,
        the device that wrote the version (the folder its files are in), its version vector, whether it
        is derived and whether it is a tombstone, its base's vector, and its creation and modification
        stamps.
        Setting records, and the tombstones of settings, are named by 64 hex digits of a keyed hash
        (HMAC\-SHA256) of their name, so no setting name is in the backend; a hashed name this version
        does not know (a newer itsypad's setting) is ignored.
        Assets are sealed (bound to the zone) before they are stored, and named by the SHA\-256 of their
        sealed bytes; a field that references an asset is also kept in the clear next to \fBsealed\fR,
        so that readers wait for the asset to arrive, and must equal the sealed copy.
        In \fIdevice.json\fR the device's \fBname\fR is its device id.
        .PP
        Every plaintext, of versions and of assets, is padded before it is sealed, so that a sealed size
        tells only a size class: one 0x80 byte and then zeros, to the next multiple of 32 bytes up to
        1024 bytes, and above that to Padm\('e's size (the length's low bits rounded up: at most 12% more).
        Padding that is not exactly this is malformed.
        .PP
        A version that does not verify is malformed (see MALFORMED ENTRIES): it is not a version
        (a sibling it is not), the sync that reads it names its record file (exit 1), and
        \fBsync status\fR and \fBsync log\fR keep naming it while it is the record's only version;
        local data stays, and a new version from any device supersedes it.
        .SS "Trust"
        What someone who can write the backend but has no key can and cannot do.
        .PP
        It cannot read what the key seals, and cannot make a device apply content that the key did
        not seal for that record, device and version: a version copied to another record, another
        device's files, another vector or zone, or turned from a tombstone into a live version or back,
        does not verify; a replayed older version verifies only as what it was, and is covered by the
        newer ones.
        It cannot change \fIzone.json\fR: the \fBmac\fR would not verify, and each device also
        remembers the format, creation time and key check value of the zone it joined, so a change of any
        of them under the same zone ID is refused (exit 1, nothing read or written, the reason in
        \fBsync status\fR).
        It cannot delete anything on a device: a device deletes local data only for a tombstone
        version that verifies.
        Records missing from the backend (folders removed, journals truncated, files withheld) are not
        deletions: after a full fetch a device sends what the backend lacks again, and a token that read a
        device whose journal is gone is treated as a replaced zone (everything is sent again).
        A device whose own folder is gone while record files of it remain removes those files
        (no journal accounts for them) and starts its journal after every sequence number of it
        that any version names or any \fIdevice.json\fR says was read.
        Numbers in \fIdevice.json\fR and journal lines are checked against their ranges before use,
        and another device's \fIdevice.json\fR that is out of range is ignored.
        .PP
        It can delete or withhold files, so that devices miss versions, wait, or send their data again;
        write a \fIzone.json\fR with a new zone ID (every device then takes the backend for a new one and
        sends everything again); and change what stays in the clear:
        version vectors, journal positions, drops, checkpoints and the digests of record files,
        which every device needs to order versions and to wait for replication without the key,
        are not authenticated, so a writer can make a device wait, or drop its own superseded files early.
        A device away for longer than the retention (90 days) may bring back something deleted
        meanwhile whose tombstone is gone: that is the price of deleting nothing that is only missing.
        .SS "Key rotation"
        \fBitsypad sync key rotate\fR replaces the key: after a sync, it builds a new encrypted zone
        (new zone ID, new key check value) holding everything the device has in a hidden sibling
        directory, \fI.NAME.itsypad\-replacement\fR (NAME being the backend directory's name), then,
        holding the lock of every device that has one in this copy,
        and only if zone.json is still the one it started from, renames the backend to
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
        the zone ID, format and creation time; that the backend is encrypted, and the key check value;
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
