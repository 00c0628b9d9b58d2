package tokenizer

import (
	"fmt"
	"strings"
	"time"
)

// pyStrftime implements the strftime directives chat templates use (dates
// in system prompts). An unknown directive is written back unchanged, as
// glibc does.
func pyStrftime(t time.Time, format string) string {
	var sb strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			sb.WriteByte(format[i])
			continue
		}
		i++
		sb.WriteString(strftimeDirective(t, format[i]))
	}
	return sb.String()
}

func strftimeDirective(t time.Time, d byte) string {
	switch d {
	case 'Y':
		return fmt.Sprintf("%04d", t.Year())
	case 'y':
		return fmt.Sprintf("%02d", t.Year()%100)
	case 'm':
		return fmt.Sprintf("%02d", int(t.Month()))
	case 'd':
		return fmt.Sprintf("%02d", t.Day())
	case 'H':
		return fmt.Sprintf("%02d", t.Hour())
	case 'M':
		return fmt.Sprintf("%02d", t.Minute())
	case 'S':
		return fmt.Sprintf("%02d", t.Second())
	case 'B':
		return t.Month().String()
	case 'b':
		return t.Month().String()[:3]
	case 'A':
		return t.Weekday().String()
	case 'a':
		return t.Weekday().String()[:3]
	case 'j':
		return fmt.Sprintf("%03d", t.YearDay())
	case '%':
		return "%"
	}
	return "%" + string(d)
}
