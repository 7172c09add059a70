// The observation pipeline of ale-py's vector env (vector/preprocessed_env.cpp):
// palette, in-place max-pool of the two captured frames, and OpenCV's
// cv::resize(..., INTER_AREA), reproduced to the bit so an observation
// equals ale-py's. Host and device: the CPU backend runs it per environment,
// the CUDA render kernel per pixel row.
//
// OpenCV facts (imgproc/src/resize.cpp, 4.x): scale = 1 / (dst / src) in
// double; both scales integer -> "area fast": 2x2 averages as (sum + 2) >> 2,
// other integer factors as float(sum) * (1.f / area) rounded half to even;
// otherwise per-axis tap tables (source index, destination index, float
// weight) and float accumulation, row by row: buf[d] += src[s] * alpha, then
// sum[d] = beta * buf[d] for a row's first tap and sum[d] += beta * buf[d]
// after, rounded half to even. Products and sums must stay unfused.
// Growing either axis, INTER_AREA has no area resize: resize() runs its
// bilinear code with weights from the area rule ("area_mode": source
// s = floor(d * scale), weight of s + 1 f = (d + 1) - (s + 1) / scale in
// double then float, 0 if negative, else its fraction; the last column
// clamped to weight 0) as 11-bit integers rounded half to even. A row is
// S[s] * w0 + S[s + 1] * w1 in int32; the vertical pass of 8-bit images is
// the vector code's, for every byte: ((r0 >> 4) * b0 >> 16) +
// ((r1 >> 4) * b1 >> 16), then (v + 2) >> 2 saturated, rows clamped to the
// image (resizeGeneric_Invoker, VResizeLinearVec_32s8u).
#pragma once

#include "common.hpp"

#if !defined(__CUDACC_RTC__)
#include <cmath>
#endif
#if !CULE_DEVICE_CODE && defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace cule {

struct AreaTap {
  int32_t src;  // source index times channels
  int32_t dst;  // destination index times channels; kLinear: the weight, an 11-bit integer
  float alpha;  // kArea: the weight
};

enum class ResizeKind : uint8_t { kCopy, kFast, kArea, kLinear };
constexpr int kMaxObsSide = 4096;  // the largest observation side: byte offsets stay far inside 32 bits
constexpr int kMaxPeriod = 64;  // source bytes of a period the host's vector pass takes

// Fixed for a batch. The tap tables live with the caller (host vector or
// device buffer); 2 * source size taps per axis are always enough.
struct ResizePlan {
  int32_t src_w, src_h, dst_w, dst_h, channels;
  ResizeKind kind;
  int32_t scale_x, scale_y;  // kFast
  const AreaTap* xtab;       // kArea: xcell_taps taps per destination column; kLinear: 2
  const AreaTap* ytab;       // kArea: back to back, in destination order; kLinear: 2 per row, src a row index
  int32_t xtab_size, ytab_size;
  int32_t xcell_taps;
  // kArea, one channel: the x cells repeat every period_src source bytes
  // (period_dst cells) in a multiple of four periods, with the same weights:
  // 160 -> 84 is 40 -> 21 four times. 0 when they do not.
  int32_t period_src, period_dst;
};

namespace preprocess {

CULE_HD float mul_rn(float a, float b) {
#if CULE_DEVICE_CODE
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
CULE_HD float add_rn(float a, float b) {
#if CULE_DEVICE_CODE
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
// cvRound (half to even). On the host, adding and removing 1.5 * 2^23 rounds
// half to even in the default rounding mode for |v| < 2^22 (sums of bytes
// are far inside), without nearbyint's library call, and lets the loops
// around it vectorise.
CULE_HD int round_even(float v) {
#if CULE_DEVICE_CODE
  return __float2int_rn(v);
#else
  constexpr float kRound = 12582912.f;
  return (int)((v + kRound) - kRound);
#endif
}
// saturate_cast<uchar>(float): cvRound, then clamp.
CULE_HD uint8_t saturate_u8(float v) {
  const int r = round_even(v);
  return (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
}

CULE_HD double floor_d(double v) {
  const double t = (double)(long long)v;
  return t > v ? t - 1.0 : t;
}
CULE_HD double ceil_d(double v) {
  const double t = (double)(long long)v;
  return t < v ? t + 1.0 : t;
}

// computeResizeAreaTab for destination cell dx: the source cells it
// overlaps, with their share of it. Returns how many; writes them to `tab`
// unless it is null.
CULE_HD int cell_taps(int src_size, int dx, int channels, double scale, AreaTap* tab) {
  int k = 0;
  const double f1 = dx * scale, f2 = f1 + scale;
  const double cell = scale < src_size - f1 ? scale : src_size - f1;
  int s1 = (int)ceil_d(f1), s2 = (int)floor_d(f2);
  if (s2 > src_size - 1) s2 = src_size - 1;
  if (s1 > s2) s1 = s2;
  auto put = [&](int s, double alpha) {
    if (tab) tab[k] = AreaTap{s * channels, dx * channels, (float)alpha};
    ++k;
  };
  if (s1 - f1 > 1e-3) put(s1 - 1, (s1 - f1) / cell);
  for (int s = s1; s < s2; ++s) put(s, 1.0 / cell);
  if (f2 - s2 > 1e-3) {
    double part = f2 - s2 < 1.0 ? f2 - s2 : 1.0;
    if (part > cell) part = cell;
    put(s2, part / cell);
  }
  return k;
}

// Every cell's taps, back to back (stride 0), or each cell padded to
// `stride` taps with zero weights on its last source: a zero product adds
// +0, which changes no sum of non-negative terms. Returns the taps written.
CULE_HD int area_taps(int src_size, int dst_size, int channels, double scale, AreaTap* tab, int stride) {
  int k = 0;
  for (int dx = 0; dx < dst_size; ++dx) {
    const int n = cell_taps(src_size, dx, channels, scale, tab + k);
    for (int i = n; i < stride; ++i) tab[k + i] = AreaTap{tab[k + n - 1].src, tab[k + n - 1].dst, 0.f};
    k += stride > n ? stride : n;
  }
  return k;
}

// The taps a plan may need. Shrinking: x cells padded to their widest (at
// most src_w + 2 dst_w taps), y cells back to back; growing: two a
// destination column and row.
CULE_HD int plan_taps(int src_w, int src_h, int dst_w, int dst_h) {
  const int area = 3 * src_w + 2 * src_h, linear = 2 * (dst_w + dst_h);
  return area > linear ? area : linear;
}

// The bilinear weights of growing (see the top of the file) for one axis: two
// taps a destination index, {source index times `channels`, integer
// weight}. `clamp_end`: the columns' clamp of the last source.
CULE_HD void linear_taps(int src_size, int dst_size, int channels, bool clamp_end, AreaTap* tab) {
  const double inv = (double)dst_size / src_size, scale = 1.0 / inv;
  for (int d = 0; d < dst_size; ++d) {
    int s = (int)floor_d(d * scale);
    float f = (float)((d + 1) - (s + 1) * inv);
    f = f <= 0.f ? 0.f : f - (float)floor_d(f);
    if (clamp_end && s >= src_size - 1) f = 0.f, s = src_size - 1;
    const int next = s + 1 < src_size ? s + 1 : src_size - 1;
    tab[2 * d] = AreaTap{s * channels, round_even((1.f - f) * 2048.f), 0.f};
    tab[2 * d + 1] = AreaTap{next * channels, round_even(f * 2048.f), 0.f};
  }
}

CULE_HD int gcd(int a, int b) {
  while (b) {
    const int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// Sets the plan's period when its x taps are those of the first period
// shifted by whole periods, weights equal to the bit, in a multiple of four
// lanes (the host's vector pass takes four at a time).
CULE_HD void find_period(ResizePlan& p) {
  const int lanes = gcd(p.src_w, p.dst_w), ps = p.src_w / lanes, pd = p.dst_w / lanes, n = p.xcell_taps;
  if (p.channels != 1 || lanes % 4 || ps % 4 || ps > kMaxPeriod) return;
  for (int d = 0; d < p.dst_w; ++d) {
    const int k = d / pd;
    for (int i = 0; i < n; ++i) {
      const AreaTap& a = p.xtab[d * n + i];
      const AreaTap& first = p.xtab[(d - k * pd) * n + i];
      if (first.src >= ps || a.src != first.src + k * ps || a.alpha != first.alpha) return;
    }
  }
  p.period_src = ps;
  p.period_dst = pd;
}

// The plan for src -> dst; tables point at storage of plan_taps() taps,
// filled here when the plan needs them.
CULE_HD ResizePlan make_plan(int src_w, int src_h, int dst_w, int dst_h, int channels, AreaTap* storage) {
  ResizePlan p{src_w, src_h, dst_w, dst_h, channels, ResizeKind::kCopy, 1, 1, nullptr, nullptr, 0, 0, 0, 0, 0};
  if (src_w == dst_w && src_h == dst_h) return p;
  if (dst_w > src_w || dst_h > src_h) {  // a scale below one: OpenCV's area resize is not taken
    p.kind = ResizeKind::kLinear;
    p.xtab = storage;
    p.ytab = storage + 2 * dst_w;
    p.xtab_size = 2 * dst_w;
    p.ytab_size = 2 * dst_h;
    linear_taps(src_w, dst_w, channels, true, storage);
    linear_taps(src_h, dst_h, 1, false, storage + 2 * dst_w);
    return p;
  }
  const double sx = 1.0 / ((double)dst_w / src_w), sy = 1.0 / ((double)dst_h / src_h);
  const int ix = (int)(sx + 0.5), iy = (int)(sy + 0.5);  // saturate_cast<int>: nearest
  const double eps = 2.220446049250313e-16;
  const double dx = sx - ix, dy = sy - iy;
  if ((dx < 0 ? -dx : dx) < eps && (dy < 0 ? -dy : dy) < eps) {
    p.kind = ResizeKind::kFast;
    p.scale_x = ix;
    p.scale_y = iy;
    return p;
  }
  p.kind = ResizeKind::kArea;
  for (int d = 0; d < dst_w; ++d) {
    const int n = cell_taps(src_w, d, channels, sx, nullptr);
    p.xcell_taps = n > p.xcell_taps ? n : p.xcell_taps;
  }
  AreaTap* x = storage;
  AreaTap* y = storage + 3 * src_w;
  p.xtab_size = area_taps(src_w, dst_w, channels, sx, x, p.xcell_taps);
  p.ytab_size = area_taps(src_h, dst_h, 1, sy, y, 0);
  p.xtab = x;
  p.ytab = y;
  find_period(p);
  return p;
}

// resizeAreaFast_: integer factors (the destination tiles the source exactly).
CULE_HD void resize_fast(const ResizePlan& p, const uint8_t* src, uint8_t* dst) {
  const int cn = p.channels, sx = p.scale_x, sy = p.scale_y, area = sx * sy;
  const int src_row = p.src_w * cn, dst_row = p.dst_w * cn;
  const float scale = 1.f / (float)area;
  const bool two_by_two = sx == 2 && sy == 2 && (cn == 1 || cn == 3 || cn == 4);
  for (int dy = 0; dy < p.dst_h; ++dy) {
    const uint8_t* s = src + (size_t)dy * sy * src_row;
    uint8_t* d = dst + (size_t)dy * dst_row;
    for (int x = 0; x < dst_row; ++x) {
      const int px = x / cn, c = x - px * cn;
      const uint8_t* cell = s + px * sx * cn + c;
      int sum = 0;
      for (int r = 0; r < sy; ++r)
        for (int q = 0; q < sx; ++q) sum += cell[r * src_row + q * cn];
      d[x] = two_by_two ? (uint8_t)((sum + 2) >> 2) : saturate_u8(mul_rn((float)sum, scale));
    }
  }
}

// Growing (kLinear): a row's horizontal pass is S[s0] * a0 + S[s1] * a1 for
// each destination byte, kept as the vector code keeps it (>> 4, int16); a
// destination byte is its two rows' values weighted by their high halves.
CULE_HD int16_t linear_cell(const uint8_t* row, const AreaTap* t, int c) {
  return (int16_t)((row[t[0].src + c] * t[0].dst + row[t[1].src + c] * t[1].dst) >> 4);
}
CULE_HD uint8_t linear_byte(int16_t h0, int16_t h1, int b0, int b1) {
  const int v = (((h0 * b0) >> 16) + ((h1 * b1) >> 16) + 2) >> 2;
  return (uint8_t)(v > 255 ? 255 : v);
}

#if !CULE_DEVICE_CODE
typedef int16_t Int16Alias __attribute__((may_alias));  // kLinear's rows in the float scratch

// One destination row from its two source rows' passes. g++ widens the
// products to 32 bits, so on x86 the vector code's own int16 steps are
// written out: the high half of each product, the rounded sum, a
// saturating pack (the weights are at most 2048, the sums at most 2,042).
inline void linear_row_host(const Int16Alias* r0, const Int16Alias* r1, int b0, int b1, uint8_t* d, int width) {
  int x = 0;
#if defined(__SSE2__)
  const __m128i w0 = _mm_set1_epi16((int16_t)b0), w1 = _mm_set1_epi16((int16_t)b1), two = _mm_set1_epi16(2);
  auto eight = [&](int at) {
    const __m128i h0 = _mm_loadu_si128((const __m128i*)(r0 + at)), h1 = _mm_loadu_si128((const __m128i*)(r1 + at));
    const __m128i sum = _mm_add_epi16(_mm_add_epi16(_mm_mulhi_epi16(h0, w0), _mm_mulhi_epi16(h1, w1)), two);
    return _mm_srai_epi16(sum, 2);
  };
  for (; x + 16 <= width; x += 16) _mm_storeu_si128((__m128i*)(d + x), _mm_packus_epi16(eight(x), eight(x + 8)));
#endif
  for (; x < width; ++x) d[x] = linear_byte(r0[x], r1[x], b0, b1);
}

// The host keeps the passes of the last two source rows in `scratch`
// (2 * dst_w * channels floats: two int16 rows, and for one channel the
// weights in pairs), as OpenCV does: neighbouring destination rows share
// their source rows. `kept` and `kept_dst` as in resize_area_rows.
template <int kCn>
inline void resize_linear_host(const ResizePlan& p, const uint8_t* src, uint8_t* dst, float* scratch,
                               const uint8_t* kept, const uint8_t* kept_dst) {
  const int width = p.dst_w * kCn, row_bytes = p.src_w * kCn;
  Int16Alias* rows[2] = {(Int16Alias*)scratch, (Int16Alias*)scratch + width};
  int held[2] = {-1, -1};
  // On x86 the horizontal pass weighs byte pairs with pmaddwd. One
  // channel: eight pixels at a time, a 16-bit load at a pixel's first tap
  // holding both its bytes. RGB: one pixel at a time, its 8 bytes and the
  // same shifted by one pixel interleaved into (S[s0 + c], S[s1 + c]) pairs;
  // the fourth lane is spare and its store is overwritten by the next
  // pixel's. The rightmost pixels, whose second tap is not the next pixel
  // or whose load would leave the row, take the scalar loop.
  int paired = 0;
#if defined(__SSE2__)
  Int16Alias* weights = rows[1] + width;  // (a0, a1) per pixel
  const int last = kCn == 1 ? p.dst_w : p.dst_w - 1;
  while (paired < last && p.xtab[2 * paired + 1].src == p.xtab[2 * paired].src + kCn &&
         (kCn == 1 || p.xtab[2 * paired].src + 8 <= row_bytes)) {
    weights[2 * paired] = (int16_t)p.xtab[2 * paired].dst;
    weights[2 * paired + 1] = (int16_t)p.xtab[2 * paired + 1].dst;
    ++paired;
  }
  if (kCn == 1) paired &= ~7;
#endif
  auto pass = [&](int k, int sy) {
    const uint8_t* s = src + (size_t)sy * row_bytes;
    Int16Alias* r = rows[k];
    int px = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    auto two_bytes = [&](int cell) {
      uint16_t v;
      __builtin_memcpy(&v, s + p.xtab[2 * cell].src, 2);
      return (short)v;
    };
    for (; kCn == 3 && px < paired; ++px) {
      int32_t w;
      __builtin_memcpy(&w, weights + 2 * px, 4);
      const __m128i v = _mm_loadl_epi64((const __m128i*)(s + p.xtab[2 * px].src));
      const __m128i pairs = _mm_unpacklo_epi8(_mm_unpacklo_epi8(v, _mm_srli_epi64(v, 24)), zero);
      const __m128i sum = _mm_srai_epi32(_mm_madd_epi16(pairs, _mm_set1_epi32(w)), 4);
      _mm_storel_epi64((__m128i*)(r + 3 * px), _mm_packs_epi32(sum, sum));
    }
    for (; kCn == 1 && px < paired; px += 8) {
      const __m128i v = _mm_set_epi16(two_bytes(px + 7), two_bytes(px + 6), two_bytes(px + 5), two_bytes(px + 4),
                                      two_bytes(px + 3), two_bytes(px + 2), two_bytes(px + 1), two_bytes(px));
      const __m128i* w = (const __m128i*)(weights + 2 * px);
      const __m128i lo = _mm_madd_epi16(_mm_unpacklo_epi8(v, zero), _mm_loadu_si128(w));
      const __m128i hi = _mm_madd_epi16(_mm_unpackhi_epi8(v, zero), _mm_loadu_si128(w + 1));
      _mm_storeu_si128((__m128i*)(r + px), _mm_packs_epi32(_mm_srai_epi32(lo, 4), _mm_srai_epi32(hi, 4)));
    }
#endif
    for (; px < p.dst_w; ++px) {
      const AreaTap t[2] = {p.xtab[2 * px], p.xtab[2 * px + 1]};  // copied: r's stores may alias the table
      for (int c = 0; c < kCn; ++c) r[px * kCn + c] = linear_cell(s, t, c);
    }
    held[k] = sy;
  };
  for (int dy = 0; dy < p.dst_h; ++dy) {
    const AreaTap* y = p.ytab + 2 * dy;
    const int s0 = y[0].src, s1 = y[1].src;
    if (kept && kept[s0] && kept[s1]) {
      __builtin_memcpy(dst + (size_t)dy * width, kept_dst + (size_t)dy * width, width);
      continue;
    }
    int k0 = held[0] == s0 ? 0 : held[1] == s0 ? 1 : -1;
    int k1 = held[0] == s1 ? 0 : held[1] == s1 ? 1 : -1;
    if (k0 < 0) pass(k0 = k1 == 0 ? 1 : 0, s0);
    if (k1 < 0 && s1 == s0) k1 = k0;  // the image's last row, clamped
    else if (k1 < 0) pass(k1 = 1 - k0, s1);
    const Int16Alias* r0 = rows[k0];
    const Int16Alias* r1 = rows[k1];
    const int b0 = y[0].dst, b1 = y[1].dst;
    linear_row_host(r0, r1, b0, b1, dst + (size_t)dy * width, width);
  }
}

// The host's kLinear for grey and RGB; false (nothing written) for other channel counts.
inline bool resize_linear_on_host(const ResizePlan& p, const uint8_t* src, uint8_t* dst, float* scratch,
                                  const uint8_t* kept, const uint8_t* kept_dst) {
  if (p.channels == 1) resize_linear_host<1>(p, src, dst, scratch, kept, kept_dst);
  else if (p.channels == 3) resize_linear_host<3>(p, src, dst, scratch, kept, kept_dst);
  else return false;
  return true;
}
#endif

CULE_HD void resize_linear(const ResizePlan& p, const uint8_t* src, uint8_t* dst, float* scratch) {
#if !CULE_DEVICE_CODE
  if (resize_linear_on_host(p, src, dst, scratch, nullptr, nullptr)) return;
#endif
  (void)scratch;
  const int cn = p.channels, width = p.dst_w * cn, row_bytes = p.src_w * cn;
  for (int dy = 0; dy < p.dst_h; ++dy) {
    const AreaTap* y = p.ytab + 2 * dy;
    const uint8_t* r0 = src + (size_t)y[0].src * row_bytes;
    const uint8_t* r1 = src + (size_t)y[1].src * row_bytes;
    const int b0 = y[0].dst, b1 = y[1].dst;
    uint8_t* d = dst + (size_t)dy * width;
    for (int x = 0; x < width; ++x) {
      const int px = x / cn, c = x - px * cn;
      d[x] = linear_byte(linear_cell(r0, p.xtab + 2 * px, c), linear_cell(r1, p.xtab + 2 * px, c), b0, b1);
    }
  }
}

CULE_HD bool same_row(const uint8_t* a, const uint8_t* b, int bytes) {
#if CULE_DEVICE_CODE
  for (int i = 0; i < bytes; ++i)
    if (a[i] != b[i]) return false;
  return true;
#else
  return __builtin_memcmp(a, b, (size_t)bytes) == 0;
#endif
}

// 8-byte words of two rows that differ, as bits (rows of at most 512 bytes,
// a multiple of 8; otherwise all ones).
CULE_HD uint64_t changed_words(const uint8_t* a, const uint8_t* b, int bytes) {
  if (bytes > 512 || (bytes & 7)) return ~0ull;
  uint64_t changed = 0;
  for (int w = 0; w < bytes / 8; ++w) {
    uint64_t x = 0, y = 0;
#if CULE_DEVICE_CODE
    for (int i = 7; i >= 0; --i) x = x << 8 | a[8 * w + i], y = y << 8 | b[8 * w + i];
#else
    __builtin_memcpy(&x, a + 8 * w, 8);
    __builtin_memcpy(&y, b + 8 * w, 8);
#endif
    changed |= (uint64_t)(x != y) << w;
  }
  return changed;
}

// The horizontal pass of OpenCV's area resize over source row `s` into buf:
// each destination cell sums its taps from OpenCV's 0 and in its order. A
// cell depends only on the source bytes under its taps, so where buf holds
// the pass of an earlier row and `changed` marks the 8-byte words in which
// the rows differ (~0: all), the cells over unchanged words are kept: a
// sprite's rows redo only the cells around it. kChannels and kTaps fix the
// channels and taps per cell at compile time (0: the plan's).
template <int kChannels, int kTaps>
CULE_HD void horizontal_cells(const ResizePlan& p, const uint8_t* s, uint64_t changed, float* buf) {
  const int cn = kChannels ? kChannels : p.channels, per_cell = kTaps ? kTaps : p.xcell_taps;
  for (int k = 0; k < p.xtab_size; k += per_cell) {
    const AreaTap* taps = p.xtab + k;
    if (changed != ~0ull) {  // then rows are at most 64 words
      const int lo = taps[0].src >> 3, hi = (taps[per_cell - 1].src + cn - 1) >> 3;
      if (!(changed & (((2ull << (hi - lo)) - 1) << lo))) continue;
    }
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    for (int i = 0; i < per_cell; ++i)
      for (int c = 0; c < cn; ++c) acc[c] = add_rn(acc[c], mul_rn((float)s[taps[i].src + c], taps[i].alpha));
    for (int c = 0; c < cn; ++c) buf[taps[0].dst + c] = acc[c];
  }
}

#if !CULE_DEVICE_CODE
typedef float Float4 __attribute__((vector_size(16)));
typedef int32_t Int4 __attribute__((vector_size(16)));
typedef uint32_t UInt4 __attribute__((vector_size(16)));
// The x cells of one group of four periods; kTaps taps a cell (0: the plan's).
template <int kTaps>
inline void periodic_cells(const ResizePlan& p, const Float4* column, Float4* out) {
  const int n = kTaps ? kTaps : p.xcell_taps;
  for (int j = 0; j < p.period_dst; ++j) {
    const AreaTap* taps = p.xtab + j * n;
    Float4 acc = column[taps[0].src] * taps[0].alpha;
    for (int i = 1; i < n; ++i) acc = acc + column[taps[i].src] * taps[i].alpha;
    __builtin_memcpy(out + j, &acc, sizeof acc);
  }
}

// The horizontal pass of a periodic plan on the host: four periods side by
// side are the lanes of one vector, so each tap is one vector multiply and
// add, in OpenCV's order per lane. buf holds cell j of period 4g + l at
// 4 (g period_dst + j) + l (store_row undoes it).
inline void horizontal_periodic(const ResizePlan& p, const uint8_t* s, float* buf) {
  const int ps = p.period_src, pd = p.period_dst;
  Float4 column[kMaxPeriod];  // column[i] = source bytes i of the four periods
  float f[4 * kMaxPeriod];
  for (int base = 0, group = 0; base < p.src_w; base += 4 * ps, ++group) {
    for (int i = 0; i < 4 * ps; ++i) f[i] = s[base + i];
    for (int i = 0; i < ps; i += 4) {  // a 4 x 4 transpose: rows are periods, columns source bytes
      Float4 r[4];
      for (int k = 0; k < 4; ++k) __builtin_memcpy(&r[k], f + k * ps + i, sizeof r[k]);
      const Float4 ab_lo = __builtin_shufflevector(r[0], r[1], 0, 4, 1, 5), ab_hi = __builtin_shufflevector(r[0], r[1], 2, 6, 3, 7);
      const Float4 cd_lo = __builtin_shufflevector(r[2], r[3], 0, 4, 1, 5), cd_hi = __builtin_shufflevector(r[2], r[3], 2, 6, 3, 7);
      column[i] = __builtin_shufflevector(ab_lo, cd_lo, 0, 1, 4, 5);
      column[i + 1] = __builtin_shufflevector(ab_lo, cd_lo, 2, 3, 6, 7);
      column[i + 2] = __builtin_shufflevector(ab_hi, cd_hi, 0, 1, 4, 5);
      column[i + 3] = __builtin_shufflevector(ab_hi, cd_hi, 2, 3, 6, 7);
    }
    Float4* out = (Float4*)(void*)buf + group * pd;  // scratch is float-aligned only: stores go through memcpy
    if (p.xcell_taps == 3) periodic_cells<3>(p, column, out);
    else periodic_cells<0>(p, column, out);
  }
}
#endif

// `before`: the row whose pass buf holds, or null.
CULE_HD void horizontal_pass(const ResizePlan& p, const uint8_t* s, const uint8_t* before, float* buf) {
#if !CULE_DEVICE_CODE
  if (p.period_src) {
    horizontal_periodic(p, s, buf);
    return;
  }
#endif
  const uint64_t changed = before ? changed_words(s, before, p.src_w * p.channels) : ~0ull;
  if (p.channels == 1 && p.xcell_taps == 3) horizontal_cells<1, 3>(p, s, changed, buf);  // 160 -> 84
  else if (p.channels == 1 && p.xcell_taps == 2) horizontal_cells<1, 2>(p, s, changed, buf);
  else horizontal_cells<0, 0>(p, s, changed, buf);
}

// A destination row from the sums of its taps, which the host's periodic
// pass leaves in lane order (horizontal_periodic).
CULE_HD void store_row(const ResizePlan& p, const float* sum, uint8_t* d) {
#if !CULE_DEVICE_CODE
  if (p.period_src) {
    // saturate_u8 four lanes at a time; sums of byte-valued taps with weights
    // adding up to one lie in [0, 255.5), so rounding alone fits a byte. Cells
    // j to j + 3 of the four periods, shifted into the bytes of one lane
    // each, are four output bytes of each period at once.
    const int pd = p.period_dst;
    const Float4 round = Float4{} + 12582912.f;
    auto rounded = [&](const float* lanes) {
      Float4 v;
      __builtin_memcpy(&v, lanes, sizeof v);
      return (UInt4)__builtin_convertvector((v + round) - round, Int4);
    };
    for (int group = 0; group < p.dst_w / pd / 4; ++group) {
      const float* g = sum + 4 * group * pd;
      uint8_t* out = d + 4 * group * pd;
      int j = 0;
      for (; j + 4 <= pd; j += 4) {
        const UInt4 bytes = rounded(g + 4 * j) | rounded(g + 4 * j + 4) << 8 | rounded(g + 4 * j + 8) << 16 |
                           rounded(g + 4 * j + 12) << 24;
        for (int l = 0; l < 4; ++l) {
          const uint32_t four = bytes[l];
          __builtin_memcpy(out + l * pd + j, &four, 4);
        }
      }
      for (; j < pd; ++j) {
        const UInt4 q = rounded(g + 4 * j);
        for (int l = 0; l < 4; ++l) out[l * pd + j] = (uint8_t)q[l];
      }
    }
    return;
  }
#endif
  for (int x = 0; x < p.dst_w * p.channels; ++x) d[x] = saturate_u8(sum[x]);
}

// ResizeArea_Invoker for destination rows [row_begin, row_end): `scratch`
// holds 2 * dst_w * channels floats. OpenCV redoes the horizontal pass of a
// source row for every tap that uses it; the result depends only on the
// row's bytes, so it is kept while the next tap's row has the same bytes
// (the same row, or a repeated scanline). Rows are independent, as in
// OpenCV's parallel split.
// `kept` (or null) marks the source rows equal to those of an earlier source
// whose resize is `kept_dst`: a destination row all of whose taps read kept
// rows is that resize's row.
CULE_HD void resize_area_rows(const ResizePlan& p, const uint8_t* src, uint8_t* dst, float* scratch, int row_begin,
                              int row_end, const uint8_t* kept = nullptr, const uint8_t* kept_dst = nullptr) {
  const int width = p.dst_w * p.channels, row_bytes = p.src_w * p.channels;
  float* buf = scratch;
  float* sum = scratch + width;
  const uint8_t* buf_row = nullptr;  // the source row buf holds
  int j = 0;
  while (j < p.ytab_size && p.ytab[j].dst < row_begin) ++j;
  for (int dy = row_begin; dy < row_end; ++dy) {
    if (kept) {
      int end = j;
      bool all = true;
      for (; end < p.ytab_size && p.ytab[end].dst == dy; ++end) all = all && kept[p.ytab[end].src];
      if (all) {
        for (int x = 0; x < width; ++x) dst[(size_t)dy * width + x] = kept_dst[(size_t)dy * width + x];
        j = end;
        continue;
      }
    }
    bool first = true;
    for (; j < p.ytab_size && p.ytab[j].dst == dy; ++j) {
      const float beta = p.ytab[j].alpha;
      const uint8_t* s = src + (size_t)p.ytab[j].src * row_bytes;
      if (!buf_row || (s != buf_row && !same_row(s, buf_row, row_bytes)))
        horizontal_pass(p, s, buf_row, buf);
      buf_row = s;
      if (first)
        for (int x = 0; x < width; ++x) sum[x] = mul_rn(beta, buf[x]);
      else
        for (int x = 0; x < width; ++x) sum[x] = add_rn(sum[x], mul_rn(beta, buf[x]));
      first = false;
    }
    store_row(p, sum, dst + (size_t)dy * width);
  }
}

CULE_PHASE void resize(const ResizePlan& p, const uint8_t* src, uint8_t* dst, float* scratch) {
  if (p.kind == ResizeKind::kCopy) {
    const int bytes = p.src_w * p.src_h * p.channels;
    for (int i = 0; i < bytes; ++i) dst[i] = src[i];
  } else if (p.kind == ResizeKind::kFast) {
    resize_fast(p, src, dst);
  } else if (p.kind == ResizeKind::kLinear) {
    resize_linear(p, src, dst, scratch);
  } else {
    resize_area_rows(p, src, dst, scratch, 0, p.dst_h);
  }
}

#if !CULE_DEVICE_CODE
// The host's resize with a memo of its last source and result (`memo`:
// resize_memo_bytes): consecutive pictures share most rows (three quarters
// of ms_pacman's 84 observation rows, more in most games), and a
// destination row whose source rows are all unchanged is copied from the
// memo. A zeroed memo is consistent (zeros resize to zeros) and the memo is
// written only here, so it needs no reset.
inline size_t resize_memo_bytes(const ResizePlan& p) {
  return (size_t)p.channels * ((size_t)p.src_w * p.src_h + (size_t)p.dst_w * p.dst_h);
}
constexpr int kMemoRows = 256;  // the tallest source the memo takes (PAL's 250 fit)
inline void resize_memoized(const ResizePlan& p, const uint8_t* src, uint8_t* dst, float* scratch, uint8_t* memo) {
  if ((p.kind != ResizeKind::kArea && p.kind != ResizeKind::kLinear) || p.src_h > kMemoRows) {
    resize(p, src, dst, scratch);
    return;
  }
  const size_t row = (size_t)p.src_w * p.channels, out_bytes = (size_t)p.dst_w * p.dst_h * p.channels;
  uint8_t* memo_src = memo;
  uint8_t* memo_dst = memo + row * p.src_h;
  uint8_t kept[kMemoRows];
  for (int y = 0; y < p.src_h; ++y) {
    kept[y] = __builtin_memcmp(src + y * row, memo_src + y * row, row) == 0;
    if (!kept[y]) __builtin_memcpy(memo_src + y * row, src + y * row, row);
  }
  if (p.kind == ResizeKind::kArea) resize_area_rows(p, src, dst, scratch, 0, p.dst_h, kept, memo_dst);
  else if (!resize_linear_on_host(p, src, dst, scratch, kept, memo_dst)) resize(p, src, dst, scratch);
  __builtin_memcpy(memo_dst, dst, out_bytes);
}
#endif

// getScreenGrayscale / getScreenRGB of one row of `width` palette indices.
CULE_HD void palette_row(const uint8_t* __restrict__ in, int width, bool grayscale, const uint8_t* __restrict__ gray,
                         const uint8_t* __restrict__ rgb, uint8_t* __restrict__ o) {
  if (grayscale) {
    int i = 0;
#if !CULE_DEVICE_CODE
    // Eight pixels of one colour (most of a row) take one lookup.
    for (; i + 8 <= width; i += 8) {
      uint64_t group;
      __builtin_memcpy(&group, in + i, 8);
      const uint64_t ones = 0x0101010101010101ull;
      if (group == (group & 0xFF) * ones) {
        const uint64_t g = gray[group & 0xFF] * ones;
        __builtin_memcpy(o + i, &g, 8);
      } else {
        for (int j = i; j < i + 8; ++j) o[j] = gray[in[j]];
      }
    }
#endif
    for (; i < width; ++i) o[i] = gray[in[i]];
  } else {
    for (int i = 0; i < width; ++i) {
      const uint8_t* c = rgb + 3 * in[i];
      o[3 * i] = c[0];
      o[3 * i + 1] = c[1];
      o[3 * i + 2] = c[2];
    }
  }
}

// The same for a picture of `pixels` indices. A 2600 picture repeats most
// scanlines: on the host a row equal to the one above copies that row's
// output instead of looking up every pixel.
CULE_HD void apply_palette(const uint8_t* __restrict__ indices, int pixels, int width, bool grayscale,
                           const uint8_t* __restrict__ gray, const uint8_t* __restrict__ rgb,
                           uint8_t* __restrict__ out) {
  const int cn = grayscale ? 1 : 3;
  for (int row = 0; row < pixels; row += width) {
    const uint8_t* in = indices + row;
    uint8_t* o = out + (size_t)row * cn;
#if !CULE_DEVICE_CODE
    if (row && __builtin_memcmp(in, in - width, (size_t)width) == 0) {
      __builtin_memcpy(o, o - width * cn, (size_t)(width * cn));
      continue;
    }
#endif
    palette_row(in, width, grayscale, gray, rgb, o);
  }
}

// maxpool_frames: dst = max(dst, src), in place (ale-py keeps the result as
// its newest raw frame, which a step that captures nothing reuses).
CULE_HD void max_in_place(uint8_t* __restrict__ dst, const uint8_t* __restrict__ src, int bytes) {
  for (int i = 0; i < bytes; ++i) dst[i] = dst[i] > src[i] ? dst[i] : src[i];
}

// apply_palette into `out`, then maxpool_frames with `before`: one pass on
// a device thread. On the host, `earlier` (or null) holds the indices
// `before` was made from: a row they share is `before`'s row (the max of a
// row with itself), and the others take two passes, as the max runs 16
// bytes at a time.
CULE_HD void apply_palette_max(const uint8_t* __restrict__ indices, int pixels, int width, bool grayscale,
                               const uint8_t* __restrict__ gray, const uint8_t* __restrict__ rgb,
                               const uint8_t* __restrict__ before, uint8_t* __restrict__ out,
                               const uint8_t* __restrict__ earlier) {
#if !CULE_DEVICE_CODE
  if (!earlier) {
    apply_palette(indices, pixels, width, grayscale, gray, rgb, out);
    max_in_place(out, before, grayscale ? pixels : 3 * pixels);
    return;
  }
  const int cn = grayscale ? 1 : 3;
  for (int row = 0; row < pixels; row += width) {
    uint8_t* o = out + (size_t)row * cn;
    const uint8_t* b = before + (size_t)row * cn;
    if (__builtin_memcmp(indices + row, earlier + row, (size_t)width) == 0) {
      __builtin_memcpy(o, b, (size_t)(width * cn));
    } else {
      palette_row(indices + row, width, grayscale, gray, rgb, o);
      max_in_place(o, b, width * cn);
    }
  }
#else
  (void)earlier;
  if (grayscale) {
    for (int i = 0; i < pixels; ++i) {
      const uint8_t v = gray[indices[i]];
      out[i] = v > before[i] ? v : before[i];
    }
  } else {
    for (int i = 0; i < pixels; ++i) {
      const uint8_t* c = rgb + 3 * indices[i];
      for (int j = 0; j < 3; ++j) out[3 * i + j] = c[j] > before[3 * i + j] ? c[j] : before[3 * i + j];
    }
  }
#endif
}


}  // namespace preprocess
}  // namespace cule
