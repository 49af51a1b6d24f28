// fmt's out-of-line code, compiled once for all of kiln (CMakeLists.txt, "fmt"): the functions
// fmt 9 defines in format-inl.h, and the instantiations its headers declare but do not define
// for the translation units that include them (float formatting, locales, the char/wchar_t
// separators). The rest of kiln includes fmt without FMT_HEADER_ONLY, so none of this is
// compiled again in each of them. Built only where CMake found fmt 9 (KILN_FMT_ONCE); with
// another fmt, kiln takes it header-only and this file is empty.
#ifdef KILN_FMT_ONCE
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl(locale_ref) -> wchar_t;
template void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>,
                         locale_ref);
}  // namespace detail
FMT_END_NAMESPACE
#endif
