/* placeholder until the server lands */
int main(void);
int
main(void)
{
    return 0;
}
