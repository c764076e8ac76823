// csharp_debug.cs — compiled with every C# program (the csharp row). SandboxFusion builds C#
// with `dotnet run`, a Debug build, where a failed Debug.Assert ends the process (exit 134,
// "Process terminated. Assertion failed."): MultiPL-E's C# tests are Debug.Assert calls. Mono
// only prints a failed assertion, if that, and goes on, so every wrong answer would pass. This
// class, in the program's own compilation, takes the place of System.Diagnostics.Debug
// (a type in source wins over the library's; mcs -nowarn:436 keeps that quiet): asserts end
// the process as .NET's do; Write and WriteLine go nowhere, as with no debugger attached.
namespace System.Diagnostics
{
    public static class Debug
    {
        public static void Assert(bool condition)
        {
            if (!condition)
                Fail(null, null);
        }

        public static void Assert(bool condition, string message)
        {
            if (!condition)
                Fail(message, null);
        }

        public static void Assert(bool condition, string message, string detailMessage)
        {
            if (!condition)
                Fail(message, detailMessage);
        }

        public static void Assert(bool condition, string message, string detailMessageFormat,
                                  params object[] args)
        {
            if (!condition)
                Fail(message, string.Format(detailMessageFormat, args));
        }

        public static void Fail(string message)
        {
            Fail(message, null);
        }

        public static void Fail(string message, string detailMessage)
        {
            Console.Out.Flush();
            Console.Error.WriteLine("Process terminated. Assertion failed." +
                                    (message == null ? "" : "\n" + message) +
                                    (detailMessage == null ? "" : "\n" + detailMessage));
            Console.Error.WriteLine(new StackTrace(1, true).ToString());
            Console.Error.Flush();
            Environment.Exit(134);
        }

        public static void Write(object value) { }
        public static void Write(string message) { }
        public static void Write(string message, string category) { }
        public static void WriteLine(object value) { }
        public static void WriteLine(string message) { }
        public static void WriteLine(string message, string category) { }
        public static void WriteLine(string format, params object[] args) { }
        public static void WriteIf(bool condition, string message) { }
        public static void WriteLineIf(bool condition, string message) { }
        public static void Print(string message) { }
        public static void Print(string format, params object[] args) { }
        public static void Indent() { }
        public static void Unindent() { }
        public static void Flush() { }
    }
}
