//===- KernelCodecsTest.cpp - RegexFullMatch (RE2) and ImageDecoder -------===//
//
// The kernels that lean on a library: RegexFullMatch on RE2's syntax, where
// it differs from ECMAScript's (Note [RegexFullMatch is RE2]), and
// ImageDecoder on BMP and PNM files written here byte by byte, on the
// formats it refuses and on broken files (Note [ImageDecoder], Misc.cpp).
// JPEG and PNG are compared with Pillow by python/tests/test_image_decoder.py.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace onnxir;
using namespace onnxir::kerneltest;

namespace {

Tensor strings(std::vector<int64_t> dims, std::vector<std::string> v) {
  Tensor t;
  t.setDataType(DataType::String);
  t.setDims(std::move(dims));
  for (auto &s : v) t.stringData.mut().push_back(std::move(s));
  t.setTyped(Tensor::TypedField::String);
  return t;
}

/// RegexFullMatch of `pattern` on `xs`: the results as 0/1, or the error.
absl::StatusOr<std::vector<int64_t>> fullMatch(const std::string &pattern,
                                               std::vector<std::string> xs) {
  int64_t n = (int64_t)xs.size();
  auto r = Call("RegexFullMatch", 20)
               .in(strings({n}, std::move(xs)))
               .attr(stringAttr("pattern", pattern))
               .run();
  if (!r.ok()) return r.status();
  EXPECT_EQ((*r)[0].dataType(), DataType::Bool);
  EXPECT_EQ((*r)[0].dims(), std::vector<int64_t>{n});
  return (*r)[0].values<int64_t>();
}

std::vector<int64_t> matches(const std::string &pattern, std::vector<std::string> xs) {
  auto r = fullMatch(pattern, std::move(xs));
  EXPECT_TRUE(r.ok()) << pattern << ": " << r.status();
  return r.ok() ? *r : std::vector<int64_t>{};
}

TEST(RegexFullMatch, MatchesWholeStrings) {
  EXPECT_EQ(matches("www\\.[\\w.-]+\\.\\bcom\\b", {"www.google.com", "www.facebook.com", "www.bbc.co.uk"}),
            (std::vector<int64_t>{1, 1, 0}));
  // A full match anchors both ends, whatever the pattern says.
  EXPECT_EQ(matches("b", {"abc", "b", ""}), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(matches("a|ab", {"ab"}), (std::vector<int64_t>{1}));
  EXPECT_EQ(matches("", {"", "x"}), (std::vector<int64_t>{1, 0}));
  // Shape kept, a scalar and an empty tensor too.
  auto r = Call("RegexFullMatch", 20)
               .in(strings({2, 2}, {"a1", "b", "a22", "a"}))
               .attr(stringAttr("pattern", "a[0-9]+"))
               .one();
  EXPECT_EQ(r.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(*r.values<int64_t>(), (std::vector<int64_t>{1, 0, 1, 0}));
  EXPECT_EQ(Call("RegexFullMatch", 20).in(strings({}, {"z"})).attr(stringAttr("pattern", "z")).one().dims(),
            std::vector<int64_t>{});
  EXPECT_EQ(Call("RegexFullMatch", 20).in(strings({0}, {})).attr(stringAttr("pattern", "z")).one().dims(),
            std::vector<int64_t>{0});
}

// Where RE2 and ECMAScript (std::regex's default) part ways.
TEST(RegexFullMatch, FollowsRe2NotEcmaScript) {
  // Python-style named groups: RE2 only.
  EXPECT_EQ(matches("(?P<year>[0-9]{4})-(?P<month>[0-9]{2})", {"2026-11", "26-11"}),
            (std::vector<int64_t>{1, 0}));
  // POSIX classes inside brackets and Unicode classes: RE2 only.
  EXPECT_EQ(matches("[[:alpha:]]+[[:digit:]]", {"abc7", "ab-7"}), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(matches("\\pL+", {"\xc3\xa9t\xc3\xa9", "e1"}), (std::vector<int64_t>{1, 0}));
  // UTF-8: "." is one code point ("é" is two bytes), which ECMAScript on
  // bytes would count as two.
  EXPECT_EQ(matches("^.$", {"\xc3\xa9", "ab"}), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(matches("..", {"\xc3\xa9"}), (std::vector<int64_t>{0}));
  // \Z and \z: RE2 reads \z as the end of text; ECMAScript has neither.
  EXPECT_EQ(matches("ab\\z", {"ab"}), (std::vector<int64_t>{1}));
  // Flags in the pattern: (?i) and (?s).
  EXPECT_EQ(matches("(?i)hello", {"HeLLo", "help"}), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(matches("a.b", {"a\nb"}), (std::vector<int64_t>{0}));
  EXPECT_EQ(matches("(?s)a.b", {"a\nb"}), (std::vector<int64_t>{1}));
  // Leftmost-longest is not asked for: alternation is still tried until the
  // whole string matches.
  EXPECT_EQ(matches("(a|ab)(c|bcd)", {"abcd"}), (std::vector<int64_t>{1}));
}

TEST(RegexFullMatch, RefusesWhatRe2DoesNotHave) {
  // Backreferences and lookaround are ECMAScript's, not RE2's: an error
  // naming RE2's reason, not a silent mismatch.
  for (const char *p : {"(a)\\1", "a(?=b)", "a(?!b)", "(?<=a)b", "[unclosed", "a{2,1}"}) {
    auto r = fullMatch(p, {"aa"});
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << p;
    EXPECT_NE(r.status().message().find("is not a valid RE2 expression"), std::string::npos)
        << r.status();
  }
  auto noPattern = Call("RegexFullMatch", 20).in(strings({1}, {"a"})).run();
  ASSERT_FALSE(noPattern.ok());
  EXPECT_NE(noPattern.status().message().find("pattern attribute is missing"), std::string::npos);
  auto notStrings =
      Call("RegexFullMatch", 20).in(u8({1}, {1})).attr(stringAttr("pattern", "a")).run();
  ASSERT_FALSE(notStrings.ok());
}

//===--- ImageDecoder ---===//

Tensor bytesTensor(const std::string &b) {
  return typed<uint8_t>(DataType::Uint8, {(int64_t)b.size()},
                        std::vector<uint8_t>(b.begin(), b.end()));
}

absl::StatusOr<std::vector<Tensor>> decode(const std::string &file, const char *format = "RGB") {
  return Call("ImageDecoder", 20)
      .in(bytesTensor(file))
      .attr(stringAttr("pixel_format", format))
      .run();
}

std::vector<int64_t> decoded(const std::string &file, const char *format,
                             std::vector<int64_t> dims) {
  auto r = decode(file, format);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  EXPECT_EQ((*r)[0].dataType(), DataType::Uint8);
  EXPECT_EQ((*r)[0].dims(), dims);
  return *(*r)[0].values<int64_t>();
}

void put16(std::string &s, uint32_t v) {
  s.push_back((char)(v & 0xff));
  s.push_back((char)(v >> 8 & 0xff));
}
void put32(std::string &s, uint32_t v) {
  put16(s, v & 0xffff);
  put16(s, v >> 16);
}

/// A BMP with a BITMAPINFOHEADER: `bits` per pixel, `height` negative for
/// top-down rows, `palette` BGRX entries, `rows` already padded.
std::string bmp(int32_t width, int32_t height, uint16_t bits, const std::string &palette,
                const std::string &rows, uint32_t compression = 0) {
  std::string s = "BM";
  uint32_t dataAt = 14 + 40 + (uint32_t)palette.size();
  put32(s, dataAt + (uint32_t)rows.size());
  put32(s, 0);
  put32(s, dataAt);
  put32(s, 40);
  put32(s, (uint32_t)width);
  put32(s, (uint32_t)height);
  put16(s, 1);
  put16(s, bits);
  put32(s, compression);
  put32(s, (uint32_t)rows.size());
  put32(s, 2835);
  put32(s, 2835);
  put32(s, (uint32_t)palette.size() / 4);
  put32(s, 0);
  return s + palette + rows;
}

// Pixels (R,G,B): row 0 = (10,20,30) (40,50,60); row 1 = (70,80,90) (200,210,220).
const std::vector<int64_t> kRgb = {10, 20, 30, 40, 50, 60, 70, 80, 90, 200, 210, 220};

TEST(ImageDecoder, Bmp24BottomUpAndTopDown) {
  // Stored bottom-up: row 1 first; BGR; rows padded to 4 bytes (6 -> 8).
  std::string bottomUp = std::string("\x5a\x50\x46\xdc\xd2\xc8\0\0", 8) +
                         std::string("\x1e\x14\x0a\x3c\x32\x28\0\0", 8);
  EXPECT_EQ(decoded(bmp(2, 2, 24, "", bottomUp), "RGB", {2, 2, 3}), kRgb);
  std::string topDown = bottomUp.substr(8) + bottomUp.substr(0, 8);
  EXPECT_EQ(decoded(bmp(2, -2, 24, "", topDown), "RGB", {2, 2, 3}), kRgb);
  // BGR reverses each pixel's channels.
  std::vector<int64_t> bgr = {30, 20, 10, 60, 50, 40, 90, 80, 70, 220, 210, 200};
  EXPECT_EQ(decoded(bmp(2, -2, 24, "", topDown), "BGR", {2, 2, 3}), bgr);
  // Grayscale: (19595 R + 38470 G + 7471 B + 32768) >> 16 per pixel.
  std::vector<int64_t> gray;
  for (size_t k = 0; k < kRgb.size(); k += 3)
    gray.push_back((19595 * kRgb[k] + 38470 * kRgb[k + 1] + 7471 * kRgb[k + 2] + 32768) >> 16);
  EXPECT_EQ(gray, (std::vector<int64_t>{18, 48, 78, 208}));
  EXPECT_EQ(decoded(bmp(2, -2, 24, "", topDown), "Grayscale", {2, 2, 1}), gray);
}

TEST(ImageDecoder, Bmp32AndPalettes) {
  // 32-bit BGRX, no padding; the fourth byte is ignored.
  std::string rows32 = std::string("\x1e\x14\x0a\xff\x3c\x32\x28\x00", 8) +
                       std::string("\x5a\x50\x46\x7f\xdc\xd2\xc8\x01", 8);
  EXPECT_EQ(decoded(bmp(2, -2, 32, "", rows32), "RGB", {2, 2, 3}), kRgb);
  // 8-bit palette of four entries, indices 3 2 / 1 0.
  std::string palette = std::string("\x1e\x14\x0a\0\x3c\x32\x28\0\x5a\x50\x46\0\xdc\xd2\xc8\0", 16);
  std::vector<int64_t> reversed = {200, 210, 220, 70, 80, 90, 40, 50, 60, 10, 20, 30};
  EXPECT_EQ(decoded(bmp(2, -2, 8, palette, std::string("\x03\x02\0\0\x01\x00\0\0", 8)), "RGB",
                    {2, 2, 3}),
            reversed);
  // 4-bit: high nibble first; 1-bit: high bit first (palette of two).
  EXPECT_EQ(decoded(bmp(2, -2, 4, palette, std::string("\x32\0\0\0\x10\0\0\0", 8)), "RGB",
                    {2, 2, 3}),
            reversed);
  EXPECT_EQ(decoded(bmp(3, -1, 1, palette.substr(0, 8), std::string("\xa0\0\0\0", 4)), "RGB",
                    {1, 3, 3}),
            (std::vector<int64_t>{40, 50, 60, 10, 20, 30, 40, 50, 60}));
  // An index past the palette is an error, not a read past it.
  auto past = decode(bmp(1, 1, 8, palette, std::string("\x09\0\0\0", 4)));
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("past its palette"), std::string::npos);
}

TEST(ImageDecoder, Pnm) {
  std::string p6 = "P6\n# a comment\n2 2\n255\n";
  for (int64_t v : kRgb) p6.push_back((char)v);
  EXPECT_EQ(decoded(p6, "RGB", {2, 2, 3}), kRgb);
  // P5 gray: repeated to RGB, its own values as Grayscale.
  std::string p5 = std::string("P5 3 1 255\n") + std::string("\x00\x7f\xff", 3);
  EXPECT_EQ(decoded(p5, "RGB", {1, 3, 3}), (std::vector<int64_t>{0, 0, 0, 127, 127, 127, 255, 255, 255}));
  EXPECT_EQ(decoded(p5, "Grayscale", {1, 3, 1}), (std::vector<int64_t>{0, 127, 255}));
  // maxval 15: round(v / 15 * 255); 16-bit samples big-endian, maxval 1000.
  EXPECT_EQ(decoded(std::string("P5 3 1 15\n") + std::string("\x00\x07\x0f", 3), "Grayscale",
                    {1, 3, 1}),
            (std::vector<int64_t>{0, 119, 255}));
  EXPECT_EQ(decoded(std::string("P5 2 1 1000\n") + std::string("\x01\xf4\x03\xe8", 4), "Grayscale",
                    {1, 2, 1}),
            (std::vector<int64_t>{128, 255}));
  auto truncated = decode(p6.substr(0, p6.size() - 1));
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("truncated"), std::string::npos);
}

TEST(ImageDecoder, RefusesOtherFormatsAndBrokenFiles) {
  struct Case {
    std::string file;
    absl::StatusCode code;
    const char *says;
  } cases[] = {
      {std::string("II*\0\x08\0\0\0", 8), absl::StatusCode::kUnimplemented, "TIFF input"},
      {std::string("MM\0*\0\0\0\x08", 8), absl::StatusCode::kUnimplemented, "TIFF input"},
      {std::string("RIFF\x10\0\0\0WEBPVP8 ", 16), absl::StatusCode::kUnimplemented, "WebP input"},
      {std::string("\0\0\0\x0cjP  \r\n\x87\n", 12), absl::StatusCode::kUnimplemented,
       "JPEG 2000 input"},
      {"GIF89a\x01\0\x01\0", absl::StatusCode::kUnimplemented, "GIF input"},
      {bmp(1, 1, 8, std::string(4, '\0'), std::string(4, '\0'), 1), absl::StatusCode::kUnimplemented,
       "compressed BMP"},
      {bmp(1, 1, 16, "", std::string(4, '\0')), absl::StatusCode::kUnimplemented, "16-bit BMP"},
      {"hello", absl::StatusCode::kInvalidArgument, "no JPEG, PNG, BMP or PNM"},
      {"", absl::StatusCode::kInvalidArgument, "no JPEG, PNG, BMP or PNM"},
      {std::string("\xff\xd8\xff\xe0\0\x10JFIF", 10), absl::StatusCode::kInvalidArgument,
       "the JPEG cannot be decoded"},
      {std::string("\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR", 16), absl::StatusCode::kInvalidArgument,
       "the PNG cannot be decoded"},
      {"BM\x10", absl::StatusCode::kInvalidArgument, "BMP file is truncated"},
      {bmp(4, 4, 24, "", std::string(8, '\0')), absl::StatusCode::kInvalidArgument,
       "BMP file is truncated"},
      {"P6 2 x 255\n", absl::StatusCode::kInvalidArgument, "PNM header is malformed"},
      {"P5 1 1 0\n\0", absl::StatusCode::kInvalidArgument, "maxval"},
      {"P5 0 1 255\n", absl::StatusCode::kInvalidArgument, "no pixels"},
  };
  for (const Case &c : cases) {
    auto r = decode(c.file);
    ASSERT_FALSE(r.ok()) << c.says;
    EXPECT_EQ(r.status().code(), c.code) << r.status();
    EXPECT_NE(r.status().message().find(c.says), std::string::npos) << r.status();
  }
  std::string p5 = std::string("P5 1 1 255\n") + "\x05";
  auto bad = decode(p5, "RGBA");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("is not RGB, BGR or Grayscale"), std::string::npos);
}

TEST(ImageDecoder, RefusesBeforeAllocatingOverTheBudget) {
  // 30000 x 30000 RGB would be 2.7 GB: refused from the header alone.
  Call c("ImageDecoder", 20);
  c.in(bytesTensor("P6 30000 30000 255\n")).attr(stringAttr("pixel_format", "RGB"));
  c.maxBytes = 1 << 20;
  EXPECT_EQ(c.code(), absl::StatusCode::kResourceExhausted);
  Call b("ImageDecoder", 20);
  b.in(bytesTensor(bmp(30000, 30000, 24, "", ""))).attr(stringAttr("pixel_format", "RGB"));
  b.maxBytes = 1 << 20;
  EXPECT_EQ(b.code(), absl::StatusCode::kResourceExhausted);
}

} // namespace
