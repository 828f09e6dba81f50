// The kernel-name module every GPU backend names its kernels with (capture/kernel_names.hpp):
// demangling, rocprofv3's --truncate-kernels, and the include/exclude filters. The mangled
// names were produced by g++ from declarations of the same shape as PyTorch's kernels.
#include <gtest/gtest.h>

#include <string>

#include "capture/kernel_names.hpp"

namespace rocprof::kernel_names {
namespace {

// at::native::vectorized_elementwise_kernel<4, FillFunctor<float>, std::array<char*, 1>>
constexpr const char* kVectorized =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_"
    "T1_";
constexpr const char* kVectorizedDemangled =
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
    "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)";
// at::native::elementwise_kernel<128, 2, a lambda of gpu_kernel_impl<a lambda of fill_kernel_cuda>>
constexpr const char* kElementwise =
    "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_15gpu_kernel_implIZNS0_16fill_kernel_"
    "cudaERNS0_18TensorIteratorBaseEEUlfE_EEvS4_RKT_EUliE_EEviT1_";

TEST(KernelNames, DemangleGivesTheCxxNameAndLeavesOtherNamesAlone) {
  EXPECT_EQ(demangle("_ZN2ns1kIiEEvPfi"), "void ns::k<int>(float*, int)");
  EXPECT_EQ(demangle(kVectorized), kVectorizedDemangled);
  EXPECT_EQ(demangle("_Z6kernelPfi"), "kernel(float*, int)");
  EXPECT_EQ(demangle("triton_poi_fused_add_0"), "triton_poi_fused_add_0");  // extern "C"
  EXPECT_EQ(demangle("_Z_not_a_name"), "_Z_not_a_name");
  EXPECT_EQ(demangle(""), "");
  EXPECT_EQ(demangle(nullptr), "");
}

TEST(KernelNames, TruncateKeepsTheFunctionsOwnName) {
  EXPECT_EQ(truncate("kernel(float*, int)"), "kernel");
  EXPECT_EQ(truncate("triton_poi_fused_add_0"), "triton_poi_fused_add_0");
  // As rocprofv3: no return type, scope, template arguments or argument list.
  EXPECT_EQ(truncate("void ns::k<int>(float*, int)"), "k");
  EXPECT_EQ(truncate("void addition_kernel<float>(float*, float const*, float const*, int, int)"),
            "addition_kernel");
  EXPECT_EQ(truncate("void (anonymous namespace)::kern<float>(float*)"), "kern");
  EXPECT_EQ(truncate("std::string ns::label[abi:cxx11](int)"), "label");
  EXPECT_EQ(truncate(""), "");
  EXPECT_EQ(truncate("(int)"), "(int)");  // nothing would be left: the name whole
}

TEST(KernelNames, TruncatePyTorchKernels) {
  EXPECT_EQ(truncate(kVectorizedDemangled), "vectorized_elementwise_kernel");
  // Template arguments holding lambdas, their argument lists and nested templates.
  const std::string elementwise = demangle(kElementwise);
  ASSERT_NE(elementwise.find("::{lambda(int)#1}>(int, "), std::string::npos) << elementwise;
  EXPECT_EQ(truncate(elementwise), "elementwise_kernel");
  // libstdc++'s own: a templated return type before the name.
  const char* uninit_copy =
      "_ZSt16__do_uninit_copyIPKSt4pairINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEES6_"
      "EPS7_"
      "ET0_T_SC_SB_";
  EXPECT_EQ(truncate(demangle(uninit_copy)), "__do_uninit_copy");
}

TEST(KernelNames, TruncateNestedTemplatesAndParentheses) {
  EXPECT_EQ(truncate("void k<(int)3, &f, g<(h)(1)> >(int (*)(int))"), "k");
  EXPECT_EQ(truncate("void ns::k<ns::pair<int, ns::pair<float, char> >, 2>(ns::T<(1 > 0)>)"), "k");
  EXPECT_EQ(truncate("void cub::DeviceReduceKernel<cub::Policy600, float*, int, "
                     "cub::Sum>(float*, float*, int, cub::GridEvenShare<int>, cub::Sum)"),
            "DeviceReduceKernel");
}

TEST(KernelNames, TruncateOperatorsAndLambdas) {
  EXPECT_EQ(truncate("at::native::Functor::operator()(int) const"), "operator()");
  EXPECT_EQ(truncate("main::{lambda(int)#1}::operator()(int) const"), "operator()");
  EXPECT_EQ(truncate("float& ns::View::operator[](long)"), "operator[]");
  EXPECT_EQ(truncate("bool ns::operator>(ns::A const&, ns::A const&)"), "operator>");
  EXPECT_EQ(truncate("bool operator< <int>(int, int)"), "operator<");
  EXPECT_EQ(truncate("main::{lambda(int, float)#1}"), "{lambda(int, float)#1}");
}

TEST(KernelNames, FilterIncludesAndExcludesByExtendedRegex) {
  std::string why;
  Filter f;
  EXPECT_FALSE(f.any());
  EXPECT_TRUE(f.keeps("anything"));
  ASSERT_TRUE(f.compile("gemm|conv", "", "--in", "--ex", &why)) << why;
  EXPECT_TRUE(f.any() && f.has_include());
  EXPECT_TRUE(f.keeps("void ampere_sgemm_128x64(float*)"));
  EXPECT_TRUE(f.keeps("implicit_convolve_sgemm"));
  EXPECT_FALSE(f.keeps("void at::native::vectorized_elementwise_kernel<4>(int)"));
  ASSERT_TRUE(f.compile("", "^void at::native::", "--in", "--ex", &why)) << why;
  EXPECT_FALSE(f.has_include());
  EXPECT_FALSE(f.keeps(kVectorizedDemangled));
  EXPECT_TRUE(f.keeps("kernel(float*, int)"));
  ASSERT_TRUE(f.compile("kernel", "_[0-9]+x[0-9]+", "--in", "--ex", &why)) << why;
  EXPECT_TRUE(f.keeps("gemm_kernel"));
  EXPECT_FALSE(f.keeps("gemm_kernel_128x64"));  // both: included, then excluded
  EXPECT_FALSE(f.keeps("gemm"));
}

TEST(KernelNames, FilterRejectsABadPatternNamingTheOption) {
  std::string why;
  Filter f;
  ASSERT_TRUE(f.compile("^gemm", "", "--in", "--ex", &why));
  EXPECT_FALSE(f.compile("ok", "gemm_(", "--trace-kernel-include-regex",
                         "--trace-kernel-exclude-regex", &why));
  EXPECT_EQ(why, "--trace-kernel-exclude-regex rejected: gemm_(");
  EXPECT_FALSE(f.any());  // nothing half-compiled stays
  EXPECT_TRUE(f.keeps("conv"));
}

TEST(KernelNames, NamingDemanglesFiltersAndDisplays) {
  std::string why;
  Naming n;
  ASSERT_TRUE(n.configure(KernelNameSettings{}, &why)) << why;
  Name got = n.name(kVectorized);
  EXPECT_TRUE(got.keep);
  EXPECT_EQ(got.display, kVectorizedDemangled);
  EXPECT_EQ(n.name(nullptr).display, "unknown");

  KernelNameSettings s;
  s.truncate = true;
  s.include = "^void at::native::";  // the demangled name is matched, not the symbol
  ASSERT_TRUE(n.configure(s, &why)) << why;
  got = n.name(kVectorized);
  EXPECT_TRUE(got.keep);
  EXPECT_EQ(got.display, "vectorized_elementwise_kernel");
  got = n.name("_ZN2ns1kIiEEvPfi");
  EXPECT_FALSE(got.keep);
  EXPECT_EQ(got.display, "k");

  s = KernelNameSettings{};
  s.mangled = true;
  s.exclude = "^_Z";  // never matches: symbols are matched demangled
  ASSERT_TRUE(n.configure(s, &why)) << why;
  got = n.name(kVectorized);
  EXPECT_TRUE(got.keep);
  EXPECT_EQ(got.display, kVectorized);
}

}  // namespace
}  // namespace rocprof::kernel_names
