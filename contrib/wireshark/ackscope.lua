-- ackscope.lua: a Wireshark dissector for every ackscope wire format.
--
-- Load it with `wireshark -X lua_script:contrib/wireshark/ackscope.lua FILE.pcapng` (or copy it
-- into your personal Lua plugins folder, Help > About > Folders). It registers one protocol per
-- wire format on the UDP ports `ackscope export --pcapng` gives the server (27100 + n, below);
-- any of them can be applied to other ports with Decode As (the "ackscope glenn" ... entries).
--
-- Formats, read from the protocol crate's own codecs (protocol/src/...):
--   27100 glenn     reliable.io header (wire/header.rs) + Glenn's bit-packed messages (strategies/glenn)
--   27101 ue4       FNetPacketNotify header (ue4/notify.rs) + bunches (ue4/bunch.rs, ue4/archive.rs)
--   27102 dnm       tag 0xD7, sequence, ack ranges (notify/dnm/wire.rs) + message block (reliability/outbox.rs)
--   27103 rellikt   protocol id, sequence, ack, ack bits (notify/rellikt.rs) + message block
--   27104 hybrid    the glenn format (strategies/hybrid.rs)
--   27105 acks      reliable.io header + opaque payload (strategies/acks.rs)
--   27106 chunks    slice (0xC5) and ack (0xCA) packets (chunks/packets.rs)
--   27107 fragments reliable.io fragments (0x01) and block acks (0xCB) (strategies/fragments.rs)
-- Bit-packed fields are read least significant bit first, as wire/bits.rs writes them.
--
-- Settings some fields are bounded by (chunk slice_bytes and max_slices, UE4 MaxPacket, the
-- rellikt protocol id) are read from the packet comment the export writes (`slice_bytes=...`);
-- without one (another capture, Decode As), from this protocol's preferences.
--
-- Expert items come from the packet comment (see src/capture/comment.rs): `resend=` (note),
-- `spurious=` (warning: resent although the peer already had it), `nak_at=` (warning: the sender
-- concluded the packet was lost), a dropped `fate=` (note). A packet that does not decode is a
-- malformed-packet error naming the field, never a Lua error.

local ackscope = Proto("ackscope", "ackscope game networking")

-- ----- preferences (used when a packet comment does not say) -----
ackscope.prefs.slice_bytes = Pref.uint("Chunk slice bytes", 1024, "chunk.slice_bytes of the capture's session")
ackscope.prefs.max_slices = Pref.uint("Chunk max slices", 256, "chunk.max_slices of the capture's session")
ackscope.prefs.max_packet = Pref.uint("UE4 MaxPacket", 1024, "ue4.max_packet_bytes (at least 998)")
ackscope.prefs.protocol_id = Pref.uint("rellikt protocol id", 0x524C4B54, "rellikt.protocol_id", 16)

-- ----- fields -----
local F = {}
local bool = function(abbr, name) return ProtoField.bool("ackscope." .. abbr, name) end
local u8 = function(abbr, name, b, vs) return ProtoField.uint8("ackscope." .. abbr, name, b or base.DEC, vs) end
local u16 = function(abbr, name, b) return ProtoField.uint16("ackscope." .. abbr, name, b or base.DEC) end
local u32 = function(abbr, name, b, vs) return ProtoField.uint32("ackscope." .. abbr, name, b or base.DEC, vs) end
local str = function(abbr, name) return ProtoField.string("ackscope." .. abbr, name) end

local message_types = { [0] = "Snapshot", [1] = "SmallEvent", [2] = "LargeEvent" }
local ch_names = { [0] = "None", [102] = "Actor", [255] = "Control", [256] = "Voice" }
local close_reasons = { [0] = "Destroyed", [1] = "Dormancy", [2] = "LevelUnloaded", [3] = "Relevancy", [4] = "TearOff" }

F.format = str("format", "Wire format")
F.seq = u32("seq", "Sequence")
F.ack = u32("ack", "Ack (newest received)")
F.ack_bits = u32("ack_bits", "Ack bits", base.HEX)
F.acked = u32("acked", "Acked sequence")
F.nakked = u32("nakked", "Nakked sequence")
-- reliable.io
F.prefix = u8("rio.prefix", "Prefix", base.HEX)
F.rio_fragment = bool("rio.fragment", "Fragment")
F.rio_short_ack = bool("rio.short_ack", "Ack as one-byte difference")
F.rio_ack_diff = u8("rio.ack_diff", "Ack difference (sequence - ack)")
F.frag_id = u8("frag.id", "Fragment id")
F.frag_count = u16("frag.count", "Fragment count")
F.frag_data = ProtoField.bytes("ackscope.frag.data", "Fragment data")
F.block_ack = u16("frag.block_ack", "Block ack (sequence reassembled)")
-- messages
F.rel_count = u16("msg.reliable_count", "Reliable messages")
F.unrel_count = u16("msg.unreliable_count", "Unreliable messages")
F.msg_count = u16("msg.count", "Messages")
F.msg = ProtoField.none("ackscope.msg", "Message")
F.msg_id = u16("msg.id", "Message id (channel)")
F.msg_consecutive = bool("msg.consecutive", "Id is previous + 1")
F.msg_type = u8("msg.type", "Message type", base.DEC, message_types)
F.msg_size = u32("msg.size", "Payload bytes")
F.msg_reliable = bool("msg.reliable", "Reliable")
F.workload_id = ProtoField.uint64("ackscope.msg.workload_id", "Workload message id")
F.payload = ProtoField.bytes("ackscope.payload", "Payload")
-- dnm / rellikt
F.has_acks = bool("dnm.has_acks", "Has ack ranges")
F.range_count = u8("dnm.range_count", "Ack ranges")
F.range = ProtoField.none("ackscope.dnm.range", "Ack range")
F.range_start = u16("dnm.range_start", "Range start")
F.range_len = u16("dnm.range_count_seqs", "Range length")
F.protocol_id = u32("rellikt.protocol_id", "Protocol id", base.HEX)
F.tag = u8("tag", "Packet tag", base.HEX)
-- UE4
F.ue4_history_words = u8("ue4.history_words", "History words")
F.ue4_history = ProtoField.bytes("ackscope.ue4.history", "History (bit i: AckedSeq - i arrived)")
F.bunch = ProtoField.none("ackscope.bunch", "Bunch")
F.b_open_or_close = bool("bunch.open_or_close", "bOpen || bClose")
F.b_open = bool("bunch.open", "bOpen")
F.b_close = bool("bunch.close", "bClose")
F.b_close_reason = u8("bunch.close_reason", "CloseReason", base.DEC, close_reasons)
F.b_paused = bool("bunch.replication_paused", "bIsReplicationPaused")
F.b_reliable = bool("bunch.reliable", "bReliable")
F.b_ch_index = u32("bunch.ch_index", "ChIndex")
F.b_exports = bool("bunch.package_map_exports", "bHasPackageMapExports")
F.b_must_map = bool("bunch.must_be_mapped_guids", "bHasMustBeMappedGUIDs")
F.b_partial = bool("bunch.partial", "bPartial")
F.b_ch_seq = u16("bunch.ch_sequence", "ChSequence")
F.b_partial_initial = bool("bunch.partial_initial", "bPartialInitial")
F.b_partial_final = bool("bunch.partial_final", "bPartialFinal")
F.b_ch_name = u16("bunch.ch_name", "ChName", base.DEC)
F.b_data_bits = u16("bunch.data_bits", "BunchDataBits")
-- chunks
F.chunk_id = u16("chunk.id", "Chunk id")
F.slice_id = u16("chunk.slice", "Slice id")
F.num_slices = u16("chunk.num_slices", "Slice count")
F.slice_len = u16("chunk.slice_bytes", "Slice data bytes")
F.slice_acked = u16("chunk.acked_slice", "Slice acked")
-- from the packet comment
F.uid = ProtoField.uint64("ackscope.uid", "ackscope send id (uid)")
F.fate = str("fate", "Link fate")
F.resend = str("resend", "Resent")
F.spurious = str("spurious", "Spurious resends (messages)")
F.nak_at = str("nak_at", "Sender concluded lost at (s)")

local field_list = {}
for _, f in pairs(F) do
    field_list[#field_list + 1] = f
end
ackscope.fields = field_list

local E = {
    malformed = ProtoExpert.new("ackscope.malformed", "Malformed ackscope packet", expert.group.MALFORMED, expert.severity.ERROR),
    resend = ProtoExpert.new("ackscope.resend.expert", "Resend", expert.group.SEQUENCE, expert.severity.NOTE),
    spurious = ProtoExpert.new("ackscope.spurious.expert", "Spurious resend", expert.group.SEQUENCE, expert.severity.WARN),
    nak = ProtoExpert.new("ackscope.nak.expert", "Nak: the sender concluded this packet was lost", expert.group.SEQUENCE, expert.severity.WARN),
    dropped = ProtoExpert.new("ackscope.dropped.expert", "Dropped by the link", expert.group.SEQUENCE, expert.severity.NOTE),
}
ackscope.experts = { E.malformed, E.resend, E.spurious, E.nak, E.dropped }

local f_comment = Field.new("frame.comment")

-- ----- a bit reader over a tvb range, least significant bit first (wire/bits.rs) -----
local Bits = {}
Bits.__index = Bits

local function bits_required(range)
    local n = 0
    while range > 0 do
        n = n + 1
        range = math.floor(range / 2)
    end
    return n
end

function Bits.new(tvb, offset)
    local len = tvb:len() - offset
    local bytes = {}
    if len > 0 then
        local ba = tvb:range(offset, len):bytes()
        for i = 0, len - 1 do
            bytes[i] = ba:get_index(i)
        end
    end
    return setmetatable({ tvb = tvb, base = offset, len = len, bytes = bytes, pos = 0 }, Bits)
end

function Bits:remaining()
    return self.len * 8 - self.pos
end

-- `n` (0..32) bits as a number; a read past the end is an error naming `what`.
function Bits:read(n, what)
    if n > self:remaining() then
        error({ what = what, msg = string.format("needs %d bits at bit %d, the packet has %d", n, self.pos, self.len * 8) })
    end
    local v, shift = 0, 0
    while n > 0 do
        local i = math.floor(self.pos / 8)
        local off = self.pos % 8
        local take = math.min(8 - off, n)
        local part = math.floor(self.bytes[i] / 2 ^ off) % 2 ^ take
        v = v + part * 2 ^ shift
        shift, n, self.pos = shift + take, n - take, self.pos + take
    end
    return v
end

-- The tvb range covering bits [from, to) of the reader.
function Bits:range(from, to)
    local b0 = math.floor(from / 8)
    local b1 = math.max(b0 + 1, math.ceil(to / 8))
    b1 = math.min(b1, self.len)
    if b1 <= b0 then
        return self.tvb:range(self.base + math.max(0, self.len - 1), math.min(1, self.len))
    end
    return self.tvb:range(self.base + b0, b1 - b0)
end

-- Reads `n` bits and adds them as `f` to `tree`; returns the value.
function Bits:field(tree, f, n, what, transform)
    local from = self.pos
    local v = self:read(n, what)
    if transform then
        v = transform(v)
    end
    tree:add(f, self:range(from, self.pos), v)
    return v
end

function Bits:bool(tree, f, what)
    local from = self.pos
    local v = self:read(1, what) == 1
    tree:add(f, self:range(from, self.pos), v)
    return v
end

-- serialize_u32(min, max): bits_required(max - min) bits, value offset by min.
function Bits:bounded(tree, f, min, max, what)
    local from = self.pos
    local v = min + self:read(bits_required(max - min), what)
    if v > max then
        error({ what = what, msg = string.format("%d outside [%d, %d]", v, min, max) })
    end
    if tree then
        tree:add(f, self:range(from, self.pos), v)
    end
    return v
end

function Bits:align(what)
    local rem = self.pos % 8
    if rem ~= 0 then
        if self:read(8 - rem, what) ~= 0 then
            error({ what = what, msg = "non-zero padding" })
        end
    end
end

-- Aligned bytes: their offset in the tvb (after the reader's base).
function Bits:bytes_at(n, what)
    self:align(what)
    if n * 8 > self:remaining() then
        error({ what = what, msg = string.format("%d bytes at byte %d, the packet has %d", n, self.pos / 8, self.len) })
    end
    local at = self.pos / 8
    self.pos = self.pos + n * 8
    return self.base + at
end

-- UE4's SerializeInt(value, max): bit by bit from the lowest until the next could reach max.
function Bits:ue4_int(max, what)
    local v, mask = 0, 1
    while v + mask < max do
        if self:read(1, what) == 1 then
            v = v + mask
        end
        mask = mask * 2
    end
    return v
end

-- UE4's SerializeIntPacked: 7 bits per byte, bit 0 of each byte "more follows".
function Bits:ue4_packed(what)
    local v, scale = 0, 1
    for _ = 1, 5 do
        local byte = self:read(8, what)
        v = v + math.floor(byte / 2) * scale
        scale = scale * 128
        if byte % 2 == 0 then
            return v
        end
    end
    error({ what = what, msg = "more than 5 bytes" })
end

local function fail(what, msg)
    error({ what = what, msg = msg })
end

-- ----- the packet comment -----
local function comment_fields(pinfo)
    local c = f_comment()
    local out = {}
    if c == nil then
        return out
    end
    local text = tostring(c.value)
    if text:sub(1, 8) ~= "ackscope" then
        return out
    end
    for k, v in text:gmatch("(%S+)=(%S+)") do
        out[k] = v
    end
    return out
end

local function setting(cf, key, pref)
    local v = cf[key] and tonumber(cf[key])
    return v or pref
end

-- ----- shared pieces -----
local function add_acked_list(tree, tvb_range, ack, ack_bits, modulo)
    local bits = ack_bits
    for i = 0, 31 do
        if bits % 2 == 1 then
            tree:add(F.acked, tvb_range, (ack - i) % modulo):set_generated()
        end
        bits = math.floor(bits / 2)
    end
end

-- A message's workload id: its first 8 bytes, little-endian (workload.rs make_payload).
local function add_workload_id(tree, tvb, offset, size)
    if size >= 8 then
        tree:add_le(F.workload_id, tvb:range(offset, 8))
        return tvb:range(offset, 8):le_uint64()
    end
end

-- The reliable.io header (wire/header.rs); returns the header length, sequence and the ack.
local function reliable_io_header(tvb, tree, pinfo)
    if tvb:len() < 1 then
        fail("reliable.io prefix", "empty packet")
    end
    local prefix = tvb(0, 1):uint()
    local h = tree:add(ackscope, tvb(0, 1), "reliable.io header")
    h:add(F.prefix, tvb(0, 1))
    if prefix % 2 == 1 then
        fail("reliable.io prefix", "a fragment where a regular packet was expected")
    end
    if prefix >= 64 then
        fail("reliable.io prefix", "reserved prefix bits set")
    end
    local short_ack = math.floor(prefix / 32) % 2 == 1
    local present = {}
    local n_present = 0
    for k = 0, 3 do
        present[k] = math.floor(prefix / 2 ^ (1 + k)) % 2 == 1
        if present[k] then
            n_present = n_present + 1
        end
    end
    local need = 3 + (short_ack and 1 or 2) + n_present
    if tvb:len() < need then
        fail("reliable.io header", string.format("%d bytes, the header needs %d", tvb:len(), need))
    end
    h:set_len(need)
    h:add(F.rio_short_ack, tvb(0, 1), short_ack)
    local seq = tvb(1, 2):le_uint()
    h:add_le(F.seq, tvb(1, 2))
    local ack, n
    if short_ack then
        local d = tvb(3, 1):uint()
        h:add(F.rio_ack_diff, tvb(3, 1))
        ack = (seq - d) % 65536
        h:add(F.ack, tvb(3, 1), ack):set_generated()
        n = 4
    else
        ack = tvb(3, 2):le_uint()
        if (seq - ack) % 65536 <= 255 then
            fail("reliable.io ack", "sent as u16 although its difference fits a byte")
        end
        h:add_le(F.ack, tvb(3, 2))
        n = 5
    end
    local ack_bits, scale = 0, 1
    for k = 0, 3 do
        local b = 255
        if present[k] then
            b = tvb(n, 1):uint()
            if b == 255 then
                fail("reliable.io ack bits", "an 0xFF byte was sent")
            end
            n = n + 1
        end
        ack_bits = ack_bits + b * scale
        scale = scale * 256
    end
    h:add(F.ack_bits, tvb(3, n - 3), ack_bits)
    add_acked_list(h, tvb(3, n - 3), ack, ack_bits, 65536)
    return n, seq, ack
end

-- One Glenn message object (reliability/message.rs): type, bounded length, aligned bytes.
local function glenn_message(r, tree, tvb, reliable, id, consecutive)
    local from = r.pos
    local m = tree:add(F.msg, r:range(from, from + 1))
    if id then
        m:add(F.msg_id, r:range(from, from + 1), id)
        if consecutive ~= nil then
            m:add(F.msg_consecutive, r:range(from, from + 1), consecutive)
        end
    end
    m:add(F.msg_reliable, r:range(from, from + 1), reliable):set_generated()
    local t = r:field(m, F.msg_type, 2, "message type")
    local bounds = { [0] = { 8, 4096 }, [1] = { 8, 263 }, [2] = { 264, 4096 } }
    if bounds[t] == nil then
        fail("message type", string.format("type id %d (3 types)", t))
    end
    local size = r:bounded(m, F.msg_size, bounds[t][1], bounds[t][2], "message size")
    local at = r:bytes_at(size, "message payload")
    m:add(F.payload, tvb:range(at, size))
    local wid = add_workload_id(m, tvb, at, size)
    m:set_len(at + size - r.base - math.floor(from / 8))
    m:set_text(string.format("%s message%s: %s, %d bytes%s", reliable and "Reliable" or "Unreliable",
        id and (" id " .. id) or "", message_types[t], size, wid and (", workload id " .. tostring(wid)) or ""))
    return wid
end

-- Glenn's payload (strategies/glenn/mod.rs doc).
local function glenn_payload(tvb, offset, tree)
    local r = Bits.new(tvb, offset)
    local p = tree:add(ackscope, tvb:range(offset), "Glenn payload")
    local n = r:bounded(p, F.rel_count, 0, 256, "reliable count")
    local prev
    local ids = {}
    for _ = 1, n do
        local id, consecutive
        if prev ~= nil then
            consecutive = r:read(1, "message id form") == 1
        end
        if consecutive then
            id = (prev + 1) % 65536
        else
            id = r:read(16, "message id")
            if prev ~= nil and id == (prev + 1) % 65536 then
                fail("message id", "previous + 1 sent in 16 bits")
            end
        end
        prev = id
        ids[#ids + 1] = tostring(glenn_message(r, p, tvb, true, id, consecutive))
    end
    local u = r:bounded(p, F.unrel_count, 0, 256, "unreliable count")
    for _ = 1, u do
        ids[#ids + 1] = tostring(glenn_message(r, p, tvb, false))
    end
    r:align("final padding")
    if r:remaining() ~= 0 then
        fail("payload end", string.format("%d trailing bytes", r:remaining() / 8))
    end
    return n, u, ids
end

-- The message block of dnm and rellikt (reliability/outbox.rs serialize_messages).
local function message_block(r, tree, tvb)
    local n = r:bounded(tree, F.msg_count, 0, 64, "message count")
    local ids = {}
    for _ = 1, n do
        local from = r.pos
        local m = tree:add(F.msg, r:range(from, from + 1))
        local size = r:bounded(m, F.msg_size, 8, 1024, "message size")
        local at = r:bytes_at(size, "message payload")
        m:add(F.payload, tvb:range(at, size))
        local wid = add_workload_id(m, tvb, at, size)
        m:set_len(at + size - r.base - math.floor(from / 8))
        m:set_text(string.format("Message: %d bytes, workload id %s", size, tostring(wid)))
        ids[#ids + 1] = tostring(wid)
    end
    return ids
end

-- ----- one dissector per format -----
local D = {}

function D.glenn(tvb, pinfo, tree)
    local n, seq, ack = reliable_io_header(tvb, tree, pinfo)
    local rel, unrel, ids = glenn_payload(tvb, n, tree)
    return string.format("seq %d ack %d, %d reliable + %d unreliable messages", seq, ack, rel, unrel)
end
D.hybrid = D.glenn

function D.acks(tvb, pinfo, tree)
    local n, seq, ack = reliable_io_header(tvb, tree, pinfo)
    if tvb:len() > n then
        tree:add(F.payload, tvb:range(n))
    end
    return string.format("seq %d ack %d, %d payload bytes", seq, ack, tvb:len() - n)
end

function D.fragments(tvb, pinfo, tree, cf)
    local tag = tvb(0, 1):uint()
    tree:add(F.tag, tvb(0, 1))
    if tag == 0x01 then
        if tvb:len() < 5 then
            fail("fragment header", "shorter than 5 bytes")
        end
        local seq, id, count = tvb(1, 2):le_uint(), tvb(3, 1):uint(), tvb(4, 1):uint() + 1
        tree:add(F.rio_fragment, tvb(0, 1), true)
        tree:add_le(F.seq, tvb(1, 2))
        tree:add(F.frag_id, tvb(3, 1))
        tree:add(F.frag_count, tvb(4, 1), count)
        local size = setting(cf, "slice_bytes", ackscope.prefs.slice_bytes)
        local data = tvb:len() - 5
        local last = id + 1 == count
        if id >= count or (last and (data == 0 or data > size)) or (not last and data ~= size) then
            fail("fragment layout", string.format("fragment %d of %d has %d bytes (fragment size %d)", id, count, data, size))
        end
        tree:add(F.frag_data, tvb:range(5))
        if id == 0 then
            add_workload_id(tree, tvb, 5, data)
        end
        return string.format("fragment %d/%d of seq %d", id, count, seq)
    elseif tag == 0xCB then
        if tvb:len() ~= 3 then
            fail("block ack", "not 3 bytes")
        end
        tree:add_le(F.block_ack, tvb(1, 2))
        tree:add_le(F.seq, tvb(1, 2))
        return string.format("block ack of seq %d", tvb(1, 2):le_uint())
    end
    fail("tag", string.format("unknown tag 0x%02x", tag))
end

function D.chunks(tvb, pinfo, tree, cf)
    local max = setting(cf, "max_slices", ackscope.prefs.max_slices)
    local size = setting(cf, "slice_bytes", ackscope.prefs.slice_bytes)
    local r = Bits.new(tvb, 0)
    local tag = r:field(tree, F.tag, 8, "tag")
    local seq = r:field(tree, F.seq, 16, "sequence")
    local chunk = r:field(tree, F.chunk_id, 16, "chunk id")
    local info
    if tag == 0xC5 then
        local slice = r:bounded(tree, F.slice_id, 0, max - 1, "slice id")
        local count = r:bounded(tree, F.num_slices, 1, max, "slice count")
        local len = size
        if slice + 1 == count then
            len = r:bounded(tree, F.slice_len, 1, size, "last slice size")
        else
            tree:add(F.slice_len, r:range(r.pos - 1, r.pos), len):set_generated()
        end
        local at = r:bytes_at(len, "slice data")
        tree:add(F.payload, tvb:range(at, len))
        if slice == 0 then
            add_workload_id(tree, tvb, at, len)
        end
        info = string.format("slice %d/%d of chunk %d, seq %d", slice, count, chunk, seq)
    elseif tag == 0xCA then
        local count = r:bounded(tree, F.num_slices, 1, max, "slice count")
        local acked = 0
        for i = 0, count - 1 do
            local from = r.pos
            if r:read(1, "ack bit") == 1 then
                tree:add(F.slice_acked, r:range(from, r.pos), i)
                acked = acked + 1
            end
        end
        r:align("ack padding")
        info = string.format("ack of chunk %d: %d/%d slices, seq %d", chunk, acked, count, seq)
    else
        fail("tag", string.format("unknown tag 0x%02x", tag))
    end
    if r:remaining() >= 8 then
        fail("packet end", string.format("%d trailing bytes", math.floor(r:remaining() / 8)))
    end
    return info
end

function D.dnm(tvb, pinfo, tree)
    local r = Bits.new(tvb, 0)
    local tag = r:field(tree, F.tag, 8, "tag")
    if tag ~= 0xD7 then
        fail("tag", string.format("0x%02x is not dnm's 0xD7", tag))
    end
    local seq = r:field(tree, F.seq, 16, "sequence")
    local nranges = 0
    if r:bool(tree, F.has_acks, "has acks") then
        nranges = r:bounded(tree, F.range_count, 1, 16, "range count")
        for _ = 1, nranges do
            local from = r.pos
            local rt = tree:add(F.range, r:range(from, from + 17))
            local start = r:field(rt, F.range_start, 16, "range start")
            local count = 1
            if r:read(1, "has count") == 1 then
                local minus_one = r:read(8, "range count")
                if minus_one == 0 then
                    fail("ack range", "has_count with a count of 1")
                end
                count = minus_one + 1
            end
            rt:add(F.range_len, r:range(from, r.pos), count)
            for i = 0, count - 1 do
                rt:add(F.acked, r:range(from, r.pos), (start + i) % 65536):set_generated()
            end
            rt:set_text(string.format("Acks %d..%d", start, (start + count - 1) % 65536))
        end
    end
    local ids = message_block(r, tree, tvb)
    r:align("final padding")
    if r:remaining() ~= 0 then
        fail("packet end", string.format("%d trailing bytes", r:remaining() / 8))
    end
    return string.format("seq %d, %d ack ranges, %d messages", seq, nranges, #ids)
end

function D.rellikt(tvb, pinfo, tree, cf)
    local expected = setting(cf, "protocol_id", ackscope.prefs.protocol_id)
    if tvb:len() < 12 then
        fail("rellikt header", string.format("%d bytes, the header needs 12", tvb:len()))
    end
    local r = Bits.new(tvb, 0)
    local id = r:field(tree, F.protocol_id, 32, "protocol id")
    if id ~= expected then
        fail("protocol id", string.format("0x%08x is not 0x%08x", id, expected))
    end
    local seq = r:field(tree, F.seq, 16, "sequence")
    local ack = r:field(tree, F.ack, 16, "ack")
    local bits = r:field(tree, F.ack_bits, 32, "ack bits")
    add_acked_list(tree, tvb(8, 4), ack, bits, 65536)
    local ids = message_block(r, tree, tvb)
    r:align("final padding")
    if r:remaining() ~= 0 then
        fail("packet end", string.format("%d trailing bytes", r:remaining() / 8))
    end
    return string.format("seq %d ack %d, %d messages", seq, ack, #ids)
end

-- A UE4 bunch (ue4/bunch.rs Bunch::read); returns a one-line summary.
local function ue4_bunch(r, tree, tvb, max_packet, index)
    local from = r.pos
    local b = tree:add(F.bunch, r:range(from, from + 1))
    local open, close = false, false
    if r:bool(b, F.b_open_or_close, "bOpen||bClose") then
        open = r:bool(b, F.b_open, "bOpen")
        close = r:bool(b, F.b_close, "bClose")
        if close then
            local f = r.pos
            local reason = r:ue4_int(15, "CloseReason")
            if reason > 4 then
                fail("CloseReason", string.format("%d is not a close reason", reason))
            end
            b:add(F.b_close_reason, r:range(f, r.pos), reason)
        end
    end
    r:bool(b, F.b_paused, "bIsReplicationPaused")
    local reliable = r:bool(b, F.b_reliable, "bReliable")
    local f = r.pos
    local ch = r:ue4_packed("ChIndex")
    if ch >= 32767 then
        fail("ChIndex", string.format("%d is not below 32767", ch))
    end
    b:add(F.b_ch_index, r:range(f, r.pos), ch)
    r:bool(b, F.b_exports, "bHasPackageMapExports")
    r:bool(b, F.b_must_map, "bHasMustBeMappedGUIDs")
    local partial = r:bool(b, F.b_partial, "bPartial")
    local ch_seq
    if reliable then
        f = r.pos
        ch_seq = r:ue4_int(1024, "ChSequence")
        b:add(F.b_ch_seq, r:range(f, r.pos), ch_seq)
    end
    local initial, final = false, false
    if partial then
        initial = r:bool(b, F.b_partial_initial, "bPartialInitial")
        final = r:bool(b, F.b_partial_final, "bPartialFinal")
    end
    local name = 0
    if reliable or open then
        f = r.pos
        if r:read(1, "ChName hard-coded bit") ~= 1 then
            fail("ChName", "sent as a string")
        end
        name = r:ue4_int(411, "ChName")
        if ch_names[name] == nil or name == 0 then
            fail("ChName", string.format("%d is not a channel name", name))
        end
        b:add(F.b_ch_name, r:range(f, r.pos), name):append_text(" (" .. ch_names[name] .. ")")
    end
    f = r.pos
    local data_bits = r:ue4_int(max_packet * 8, "BunchDataBits")
    b:add(F.b_data_bits, r:range(f, r.pos), data_bits)
    if data_bits % 8 ~= 0 then
        fail("bunch data", string.format("%d bits is not whole bytes", data_bits))
    end
    local data_from = r.pos
    local payload = {}
    for i = 1, data_bits / 8 do
        payload[i] = r:read(8, "bunch data")
    end
    b:set_len(r:range(from, r.pos):len())
    -- Messages framed with a LEB128 length (ue4/packet.rs frame_message), each starting with its
    -- workload id; a continuation of a partial bunch starts mid-message, and control carries text.
    local msgs = {}
    if name ~= 255 and ch ~= 0 and (not partial or initial) then
        local at = 1
        while at <= #payload do
            local len, shift, start = 0, 0, at
            repeat
                local byte = payload[at]
                if byte == nil then
                    break
                end
                at = at + 1
                len = len + (byte % 128) * 2 ^ shift
                shift = shift + 7
            until byte < 128 or shift > 21
            local first_byte = data_from + (at - 1) * 8
            local have = math.min(len, #payload - at + 1)
            if have >= 8 then
                local wid = UInt64(0)
                for k = 7, 0, -1 do
                    wid = wid * 256 + payload[at + k]
                end
                b:add(F.workload_id, r:range(first_byte, first_byte + 64), wid)
                msgs[#msgs + 1] = tostring(wid)
            end
            if len == 0 or at + len - 1 > #payload then
                break
            end
            at = at + len
        end
    end
    local flags = (open and " open" or "") .. (close and " close" or "") .. (partial and
        (" partial" .. (initial and " initial" or "") .. (final and " final" or "")) or "")
    b:set_text(string.format("Bunch %d: ch %d%s%s, %d bytes%s%s", index, ch,
        reliable and string.format(" reliable ChSequence %d", ch_seq) or " unreliable",
        name ~= 0 and (" " .. ch_names[name]) or "", data_bits / 8, flags,
        #msgs > 0 and (", msgs " .. table.concat(msgs, ",")) or ""))
end

function D.ue4(tvb, pinfo, tree, cf)
    local max_packet = setting(cf, "max_packet", ackscope.prefs.max_packet)
    local r = Bits.new(tvb, 0)
    local packed = r:read(32, "notify header")
    local seq = math.floor(packed / 2 ^ 18) % 16384
    local acked = math.floor(packed / 16) % 16384
    local words = packed % 16 + 1
    local h = tree:add(ackscope, tvb(0, 4), "Packet notify header")
    h:add(F.seq, tvb(0, 4), seq)
    h:add(F.ack, tvb(0, 4), acked)
    h:add(F.ue4_history_words, tvb(0, 4), words)
    if words > 8 then
        fail("history words", string.format("%d history words (at most 8)", words))
    end
    if r:remaining() < words * 32 then
        fail("history", "truncated")
    end
    local hist = tvb(4, words * 4)
    h:add(F.ue4_history, hist)
    h:set_len(4 + words * 4)
    for w = 0, words - 1 do
        local word = r:read(32, "history")
        for bit = 0, 31 do
            local s = (acked - (w * 32 + bit)) % 16384
            if word % 2 == 1 then
                h:add(F.acked, tvb(4 + w * 4, 4), s):set_generated()
            else
                h:add(F.nakked, tvb(4 + w * 4, 4), s):set_generated()
            end
            word = math.floor(word / 2)
        end
    end
    local last = tvb(tvb:len() - 1, 1):uint()
    if last == 0 then
        fail("termination bit", "the last byte is zero (packet missing trailing 1)")
    end
    local high = 7
    while math.floor(last / 2 ^ high) % 2 == 0 do
        high = high - 1
    end
    local end_bits = (tvb:len() - 1) * 8 + high
    if end_bits < r.pos then
        fail("termination bit", "inside the header")
    end
    local n = 0
    while r.pos < end_bits do
        ue4_bunch(r, tree, tvb, max_packet, n)
        n = n + 1
        if r.pos > end_bits then
            fail("bunch", "runs past the termination bit")
        end
    end
    return string.format("packet %d acked %d, %d bunches", seq, acked, n)
end

-- ----- the protocol entry points -----
local formats = { "glenn", "ue4", "dnm", "rellikt", "hybrid", "acks", "chunks", "fragments" }
local SERVER_PORT_BASE = 27100

local function dissect(format, tvb, pinfo, tree)
    pinfo.cols.protocol = "ackscope"
    local t = tree:add(ackscope, tvb(), "ackscope " .. format)
    t:add(F.format, tvb(0, 0), format):set_generated()
    local cf = comment_fields(pinfo)
    local ok, res = pcall(D[format], tvb, pinfo, t, cf)
    local info
    if ok then
        info = res or ""
    else
        local what = type(res) == "table" and res.what or "dissector"
        local msg = type(res) == "table" and res.msg or tostring(res)
        t:add_proto_expert_info(E.malformed, string.format("malformed %s packet: %s: %s", format, what, msg))
        info = "[malformed: " .. what .. "]"
    end
    -- What ackscope knows about this packet (the export's comment).
    if cf.uid then
        local uid = tonumber(cf.uid)
        if uid then
            t:add(F.uid, tvb(0, 0), UInt64(uid % 2 ^ 32, math.floor(uid / 2 ^ 32))):set_generated()
        end
    end
    if cf.fate then
        t:add(F.fate, tvb(0, 0), cf.fate):set_generated()
        if cf.fate:sub(1, 8) == "dropped_" then
            t:add_proto_expert_info(E.dropped, "Dropped by the link: " .. cf.fate:sub(9))
            info = info .. " [dropped]"
        end
    end
    if cf.resend then
        t:add(F.resend, tvb(0, 0), cf.resend):set_generated()
        t:add_proto_expert_info(E.resend, "Resend: " .. cf.resend)
        info = info .. " [resend]"
    end
    if cf.spurious then
        t:add(F.spurious, tvb(0, 0), cf.spurious):set_generated()
        t:add_proto_expert_info(E.spurious, "Spurious resend of message " .. cf.spurious ..
            ": the peer's application already had it")
        info = info .. " [spurious]"
    end
    if cf.nak_at then
        t:add(F.nak_at, tvb(0, 0), cf.nak_at):set_generated()
        t:add_proto_expert_info(E.nak, "Nak: the sender concluded this packet was lost at " .. cf.nak_at .. " s")
        info = info .. " [nak]"
    end
    pinfo.cols.info = format .. " " .. info
    return tvb:len()
end

local udp_port = DissectorTable.get("udp.port")
for i, format in ipairs(formats) do
    local p = Proto("ackscope_" .. format, "ackscope " .. format)
    p.dissector = function(tvb, pinfo, tree)
        return dissect(format, tvb, pinfo, tree)
    end
    udp_port:add(SERVER_PORT_BASE + i - 1, p)
end
