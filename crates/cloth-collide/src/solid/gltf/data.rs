//! Reading a glTF file's bytes: the GLB container, buffers (GLB chunk, external files, data
//! URIs) and accessors, with every offset and length checked so that malformed files give an
//! error, never a panic or an unbounded allocation.

use std::path::Path;

use ::gltf::accessor::{DataType, Dimensions};

use crate::error::CollideError;

/// Largest file (glTF, GLB or external buffer) the reader accepts (bytes): 1 GiB.
pub const MAX_GLTF_BYTES: u64 = 1 << 30;

/// Largest number of components an accessor without a buffer view (all zeros, then sparse
/// values) may declare: 2^26.
const MAX_VIEWLESS_COMPONENTS: usize = 1 << 26;

/// Reads a file of at most [`MAX_GLTF_BYTES`].
pub(crate) fn read_limited(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(MAX_GLTF_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_GLTF_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than the limit of {MAX_GLTF_BYTES} bytes"),
        ));
    }
    Ok(bytes)
}

/// Splits a GLB file (glTF 2.0 section 4, "GLB File Format Specification") into its JSON
/// chunk and optional BIN chunk. Lengths are checked against the data before slicing.
pub(crate) fn split_glb(bytes: &[u8]) -> Result<(&[u8], Option<&[u8]>), String> {
    let u32_at = |o: usize| -> Option<usize> {
        bytes
            .get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let version = u32_at(4).ok_or("GLB header is truncated")?;
    if version != 2 {
        return Err(format!("GLB version {version} is not supported (only 2)"));
    }
    let length = u32_at(8).ok_or("GLB header is truncated")?;
    if length > bytes.len() || length < 12 {
        return Err(format!(
            "GLB header declares {length} bytes, the file has {}",
            bytes.len()
        ));
    }
    let bytes = &bytes[..length];
    type Chunk<'a> = Option<(&'a [u8; 4], &'a [u8])>;
    let chunk = |at: usize| -> Result<Chunk<'_>, String> {
        if at >= bytes.len() {
            return Ok(None);
        }
        let len = u32_at(at)
            .filter(|_| at + 8 <= bytes.len())
            .ok_or_else(|| format!("GLB chunk header at byte {at} is truncated"))?;
        let ty: &[u8; 4] = bytes[at + 4..at + 8].try_into().map_err(|_| "bad chunk")?;
        let body = bytes
            .get(at + 8..at + 8 + len)
            .ok_or_else(|| format!("GLB chunk at byte {at} declares {len} bytes past the end"))?;
        Ok(Some((ty, body)))
    };
    let (ty, json) = chunk(12)?.ok_or("GLB file has no JSON chunk")?;
    if ty != b"JSON" {
        return Err("the first GLB chunk is not JSON".into());
    }
    let next = 12 + 8 + json.len();
    let bin = match chunk(next.next_multiple_of(4))? {
        Some((b"BIN\0", body)) => Some(body),
        _ => None,
    };
    Ok((json, bin))
}

/// Decodes standard base64 (RFC 4648, with or without padding).
pub(crate) fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut acc = 0u32;
    let mut bits = 0;
    for (i, c) in text.bytes().enumerate() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            _ => return Err(format!("invalid base64 character at position {i}")),
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

/// Decodes %XX escapes of a relative URI (RFC 3986) into a path.
pub(crate) fn percent_decode(uri: &str) -> Result<String, String> {
    let b = uri.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad percent escape in URI '{uri}'"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("URI '{uri}' is not UTF-8 after decoding"))
}

/// The loaded buffers of a document.
pub(crate) struct Buffers {
    /// File label for errors.
    pub file: String,
    /// Buffer contents, each exactly its declared byte length.
    pub data: Vec<Vec<u8>>,
}

/// Object label for errors: `'name' (#i)`, or `#i` without a name.
pub(crate) fn label(name: Option<&str>, index: usize) -> String {
    match name {
        Some(n) if !n.is_empty() => format!("'{n}' (#{index})"),
        _ => format!("#{index}"),
    }
}

impl Buffers {
    /// Loads every buffer of the document: the GLB BIN chunk for a buffer without URI, base64
    /// data URIs, and files relative to `base` (the glTF file's folder).
    pub fn load(
        doc: &::gltf::Document,
        blob: Option<&[u8]>,
        base: Option<&Path>,
        file: &str,
    ) -> Result<Buffers, CollideError> {
        let mut data = Vec::new();
        for b in doc.buffers() {
            let err = |reason: String| CollideError::GltfBuffer {
                file: file.to_string(),
                buffer: label(b.name(), b.index()),
                reason,
            };
            let bytes: Vec<u8> = match b.source() {
                ::gltf::buffer::Source::Bin => blob
                    .ok_or_else(|| err("no URI and the file has no GLB BIN chunk".into()))?
                    .to_vec(),
                ::gltf::buffer::Source::Uri(uri) => {
                    if let Some(rest) = uri.strip_prefix("data:") {
                        let (head, payload) = rest
                            .split_once(',')
                            .ok_or_else(|| err("data URI without ','".into()))?;
                        if !head.ends_with(";base64") {
                            return Err(err("data URI is not base64".into()));
                        }
                        base64_decode(payload).map_err(&err)?
                    } else if uri.contains("://") || uri.starts_with('/') {
                        return Err(err(format!(
                            "URI '{uri}' is not a relative file path or data URI"
                        )));
                    } else {
                        let rel = percent_decode(uri).map_err(&err)?;
                        let base = base.ok_or_else(|| {
                            err(format!(
                                "external file '{rel}' but no folder to resolve it in"
                            ))
                        })?;
                        let path = base.join(&rel);
                        read_limited(&path)
                            .map_err(|e| err(format!("cannot read {}: {e}", path.display())))?
                    }
                }
            };
            let need = b.length();
            if bytes.len() < need {
                return Err(err(format!(
                    "declares {need} bytes but has {}",
                    bytes.len()
                )));
            }
            let mut bytes = bytes;
            bytes.truncate(need);
            data.push(bytes);
        }
        Ok(Buffers {
            file: file.to_string(),
            data,
        })
    }

    fn err(&self, acc: &::gltf::Accessor, usage: &str, reason: String) -> CollideError {
        CollideError::GltfAccessor {
            file: self.file.clone(),
            accessor: acc.index(),
            usage: usage.to_string(),
            reason,
        }
    }

    /// The bytes of a buffer view, checked against its buffer.
    fn view_bytes(
        &self,
        view: &::gltf::buffer::View,
        acc: &::gltf::Accessor,
        usage: &str,
    ) -> Result<&[u8], CollideError> {
        let buf = self.data.get(view.buffer().index()).ok_or_else(|| {
            self.err(
                acc,
                usage,
                format!("buffer #{} is missing", view.buffer().index()),
            )
        })?;
        let (o, l) = (view.offset(), view.length());
        o.checked_add(l)
            .and_then(|end| buf.get(o..end))
            .ok_or_else(|| {
                self.err(
                    acc,
                    usage,
                    format!(
                        "buffer view #{} (offset {o}, length {l}) exceeds its buffer of {} bytes",
                        view.index(),
                        buf.len()
                    ),
                )
            })
    }

    /// Reads an accessor as f64 components (glTF 2.0 section 3.6.2, "Accessors"): `count`
    /// elements of `dims` components each, row after row; matrices column-major with the
    /// column padding of section 3.6.2.4; normalized integers mapped to [0, 1] or [-1, 1] as
    /// in section 3.11 ("Animations", the normalized-integer table); sparse substitution
    /// (section 3.6.2.3) applied. Checks that the accessor has `dims` components per element.
    pub fn read(
        &self,
        acc: &::gltf::Accessor,
        dims: &[Dimensions],
        usage: &str,
    ) -> Result<Vec<f64>, CollideError> {
        let err = |reason: String| self.err(acc, usage, reason);
        let dim = acc.dimensions();
        if !dims.contains(&dim) {
            return Err(err(format!("type {dim:?}, expected {dims:?}")));
        }
        let layout = Layout::new(acc).ok_or_else(|| {
            let count = acc.count();
            err(format!("count {count} is too large"))
        })?;
        let mut out = match acc.view() {
            Some(view) => self.read_view(acc, &view, &layout, usage)?,
            None => {
                if layout.total > MAX_VIEWLESS_COMPONENTS {
                    let count = layout.count;
                    return Err(err(format!(
                        "{count} elements without a buffer view exceed the limit of {MAX_VIEWLESS_COMPONENTS} components"
                    )));
                }
                vec![0.0; layout.total]
            }
        };
        if let Some(sparse) = acc.sparse() {
            self.read_sparse(acc, &sparse, &layout, usage, &mut out)?;
        }
        if let Some(i) = out.iter().position(|x| !x.is_finite()) {
            return Err(err(format!("element {} is not finite", i / layout.n)));
        }
        Ok(out)
    }

    /// The elements of an accessor stored in buffer view `view`, checked against it.
    fn read_view(
        &self,
        acc: &::gltf::Accessor,
        view: &::gltf::buffer::View,
        layout: &Layout,
        usage: &str,
    ) -> Result<Vec<f64>, CollideError> {
        let err = |reason: String| self.err(acc, usage, reason);
        let bytes = self.view_bytes(view, acc, usage)?;
        let (count, elem) = (layout.count, layout.elem);
        let stride = view.stride().unwrap_or(elem);
        if stride < elem {
            return Err(err(format!(
                "byte stride {stride} is smaller than the element size {elem}"
            )));
        }
        let off = acc.offset();
        if count > 0 {
            let end = (count - 1)
                .checked_mul(stride)
                .and_then(|x| x.checked_add(off))
                .and_then(|x| x.checked_add(elem));
            if end.is_none_or(|e| e > bytes.len()) {
                return Err(err(format!(
                    "{count} elements of {elem} bytes (stride {stride}, offset {off}) exceed buffer view #{} of {} bytes",
                    view.index(),
                    bytes.len()
                )));
            }
        }
        let mut out = Vec::with_capacity(layout.total);
        for e in 0..count {
            let base = off + e * stride;
            for c in 0..layout.cols {
                for r in 0..layout.rows {
                    let at = base + c * layout.col_stride + r * layout.csize;
                    out.push(layout.convert(&bytes[at..at + layout.csize]));
                }
            }
        }
        Ok(out)
    }

    /// Substitutes the sparse values of an accessor (section 3.6.2.3) into `out`.
    fn read_sparse(
        &self,
        acc: &::gltf::Accessor,
        sparse: &::gltf::accessor::sparse::Sparse,
        layout: &Layout,
        usage: &str,
        out: &mut [f64],
    ) -> Result<(), CollideError> {
        let err = |reason: String| self.err(acc, usage, reason);
        let (count, elem) = (layout.count, layout.elem);
        let k = sparse.count();
        let idx_view = sparse.indices().view();
        let idx_bytes = self.view_bytes(&idx_view, acc, usage)?;
        let isize = match sparse.indices().index_type() {
            ::gltf::accessor::sparse::IndexType::U8 => 1,
            ::gltf::accessor::sparse::IndexType::U16 => 2,
            ::gltf::accessor::sparse::IndexType::U32 => 4,
        };
        let ioff = sparse.indices().offset();
        let val_view = sparse.values().view();
        let val_bytes = self.view_bytes(&val_view, acc, usage)?;
        let voff = sparse.values().offset();
        let fits = |off: usize, size: usize, len: usize| {
            k.checked_mul(size)
                .and_then(|x| x.checked_add(off))
                .is_some_and(|end| end <= len)
        };
        if !fits(ioff, isize, idx_bytes.len()) || !fits(voff, elem, val_bytes.len()) {
            return Err(err(format!("{k} sparse entries exceed their buffer views")));
        }
        for s in 0..k {
            let at = ioff + s * isize;
            let b = &idx_bytes[at..at + isize];
            let i = match isize {
                1 => b[0] as usize,
                2 => u16::from_le_bytes([b[0], b[1]]) as usize,
                _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize,
            };
            if i >= count {
                return Err(err(format!(
                    "sparse index {i} is out of range (count {count})"
                )));
            }
            let base = voff + s * elem;
            for c in 0..layout.cols {
                for r in 0..layout.rows {
                    let at = base + c * layout.col_stride + r * layout.csize;
                    out[i * layout.n + c * layout.rows + r] =
                        layout.convert(&val_bytes[at..at + layout.csize]);
                }
            }
        }
        Ok(())
    }

    /// Reads an accessor of unsigned integers (indices, joint numbers) as usize.
    pub fn read_uints(
        &self,
        acc: &::gltf::Accessor,
        dims: &[Dimensions],
        usage: &str,
    ) -> Result<Vec<usize>, CollideError> {
        if !matches!(
            acc.data_type(),
            DataType::U8 | DataType::U16 | DataType::U32
        ) || acc.normalized()
        {
            return Err(self.err(
                acc,
                usage,
                format!(
                    "component type {:?}, expected unsigned integers",
                    acc.data_type()
                ),
            ));
        }
        Ok(self
            .read(acc, dims, usage)?
            .into_iter()
            .map(|x| x as usize)
            .collect())
    }
}

/// How an accessor's elements are laid out in bytes.
struct Layout {
    ty: DataType,
    normalized: bool,
    /// Rows and columns of an element (columns > 1 for matrices).
    rows: usize,
    cols: usize,
    /// Bytes of a component.
    csize: usize,
    /// Bytes from one column to the next (matrix columns start on 4-byte boundaries).
    col_stride: usize,
    /// Bytes of an element.
    elem: usize,
    /// Components of an element.
    n: usize,
    /// Elements.
    count: usize,
    /// Components of all elements.
    total: usize,
}

impl Layout {
    /// The layout of `acc`; `None` when its component count overflows.
    fn new(acc: &::gltf::Accessor) -> Option<Layout> {
        let ty = acc.data_type();
        let csize = ty.size();
        let (rows, cols) = match acc.dimensions() {
            Dimensions::Scalar => (1, 1),
            Dimensions::Vec2 => (2, 1),
            Dimensions::Vec3 => (3, 1),
            Dimensions::Vec4 => (4, 1),
            Dimensions::Mat2 => (2, 2),
            Dimensions::Mat3 => (3, 3),
            Dimensions::Mat4 => (4, 4),
        };
        // Matrix columns start on 4-byte boundaries.
        let col_stride = if cols > 1 {
            (rows * csize).next_multiple_of(4)
        } else {
            rows * csize
        };
        let n = rows * cols;
        let count = acc.count();
        Some(Layout {
            ty,
            normalized: acc.normalized(),
            rows,
            cols,
            csize,
            col_stride,
            elem: col_stride * cols,
            n,
            count,
            total: count.checked_mul(n)?,
        })
    }

    /// One component from its little-endian bytes, normalized integers mapped to [0, 1] or
    /// [-1, 1].
    fn convert(&self, b: &[u8]) -> f64 {
        let normalized = self.normalized;
        match self.ty {
            DataType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            DataType::U32 => {
                let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64;
                if normalized { v / u32::MAX as f64 } else { v }
            }
            DataType::U16 => {
                let v = u16::from_le_bytes([b[0], b[1]]) as f64;
                if normalized { v / 65535.0 } else { v }
            }
            DataType::I16 => {
                let v = i16::from_le_bytes([b[0], b[1]]) as f64;
                if normalized {
                    (v / 32767.0).max(-1.0)
                } else {
                    v
                }
            }
            DataType::U8 => {
                let v = b[0] as f64;
                if normalized { v / 255.0 } else { v }
            }
            DataType::I8 => {
                let v = b[0] as i8 as f64;
                if normalized { (v / 127.0).max(-1.0) } else { v }
            }
        }
    }
}
