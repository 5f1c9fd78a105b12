//! Images for the read tool: recognised by their magic bytes, downscaled when too large to
//! send to a model.

use std::io::Cursor;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use image::{DynamicImage, ImageFormat, ImageReader};

/// Image files bigger than this (32 MiB) are refused before they are read.
pub const IMAGE_MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// Images wider or taller than this are downscaled.
pub const IMAGE_MAX_DIMENSION: u32 = 2000;
/// Images whose base64 is longer than this (4.5 MB) are downscaled.
pub const IMAGE_MAX_BASE64_BYTES: usize = 4_718_592;

/// The MIME type of an image format recognised by its first bytes (PNG, JPEG, GIF, WebP).
pub fn sniff_image_mime(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// An image ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedImage {
    /// Base64 of the bytes sent.
    pub data: String,
    /// MIME type of the bytes sent (may differ from the file's after re-encoding).
    pub mime_type: String,
    /// Size sent.
    pub width: u32,
    /// Size sent.
    pub height: u32,
    /// Size of the file's image.
    pub original_width: u32,
    /// Size of the file's image.
    pub original_height: u32,
}

impl PreparedImage {
    /// Whether the image was downscaled.
    pub fn resized(&self) -> bool {
        (self.width, self.height) != (self.original_width, self.original_height)
    }
}

fn format_of(mime: &str) -> Option<ImageFormat> {
    match mime {
        "image/png" => Some(ImageFormat::Png),
        "image/jpeg" => Some(ImageFormat::Jpeg),
        "image/gif" => Some(ImageFormat::Gif),
        "image/webp" => Some(ImageFormat::WebP),
        _ => None,
    }
}

/// Base64-encodes the image, downscaling (and re-encoding as PNG or JPEG, whichever is
/// smaller) when it is over [`IMAGE_MAX_DIMENSION`] on a side or over
/// [`IMAGE_MAX_BASE64_BYTES`] of base64. The error is a sentence for the model.
pub fn prepare_image(bytes: &[u8], mime: &str) -> Result<PreparedImage, String> {
    let format = format_of(mime).ok_or_else(|| format!("{mime} is not a supported image type."))?;
    let dims = ImageReader::with_format(Cursor::new(bytes), format).into_dimensions();
    let base64_len = bytes.len().div_ceil(3) * 4;
    if let Ok((w, h)) = dims
        && w <= IMAGE_MAX_DIMENSION
        && h <= IMAGE_MAX_DIMENSION
        && base64_len <= IMAGE_MAX_BASE64_BYTES
    {
        return Ok(PreparedImage {
            data: STANDARD.encode(bytes),
            mime_type: mime.to_string(),
            width: w,
            height: h,
            original_width: w,
            original_height: h,
        });
    }
    let image = image::load_from_memory_with_format(bytes, format)
        .map_err(|e| format!("The image could not be decoded ({e}), so it cannot be shown."))?;
    let (ow, oh) = (image.width(), image.height());
    let scale = f64::min(
        1.0,
        f64::from(IMAGE_MAX_DIMENSION) / f64::from(ow.max(oh).max(1)),
    );
    let mut target = (
        ((f64::from(ow) * scale).round() as u32).max(1),
        ((f64::from(oh) * scale).round() as u32).max(1),
    );
    for _ in 0..12 {
        let resized = if target == (ow, oh) {
            image.clone()
        } else {
            image.resize_exact(target.0, target.1, image::imageops::FilterType::Triangle)
        };
        let (data, mime_type) = smallest_encoding(&resized)?;
        if data.len().div_ceil(3) * 4 <= IMAGE_MAX_BASE64_BYTES {
            return Ok(PreparedImage {
                data: STANDARD.encode(&data),
                mime_type: mime_type.to_string(),
                width: resized.width(),
                height: resized.height(),
                original_width: ow,
                original_height: oh,
            });
        }
        target = (
            ((f64::from(target.0) * 0.75) as u32).max(1),
            ((f64::from(target.1) * 0.75) as u32).max(1),
        );
    }
    Err("The image could not be made small enough to send; describe what you need from it and inspect it another way.".to_string())
}

fn smallest_encoding(image: &DynamicImage) -> Result<(Vec<u8>, &'static str), String> {
    let mut png = Vec::new();
    image
        .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
        .map_err(|e| format!("The image could not be re-encoded ({e})."))?;
    let mut jpeg = Vec::new();
    let rgb = DynamicImage::ImageRgb8(image.to_rgb8());
    let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 80);
    if rgb.write_with_encoder(encoder).is_ok() && jpeg.len() < png.len() {
        return Ok((jpeg, "image/jpeg"));
    }
    Ok((png, "image/png"))
}
